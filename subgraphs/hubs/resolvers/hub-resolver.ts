import type { ExpensiveGate } from '../../../lib/kit/expensive';
import { GraphQLJSONObject } from 'graphql-scalars';
import { AppError } from '../../../lib/errors';
import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Args, Ctx, Field, FieldResolver, Info, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { IdArgs, VersionedIdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { answerPlainList, plainSelection } from '../../../lib/plain-lists';
import { TrashEmptying, TrashEntry, TrashPage } from '../../../lib/kit/trash';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { UserReference } from '../../../lib/user-reference';
import { graphFromCanvas, canvasOf } from '../canvas';
import { Hub } from '../entities/hub';
import { HubEdge } from '../entities/hub-edge';
import { HubNode, isRefType, NodeType } from '../entities/hub-node';
import { NoteReference, VaultItemReference, VoiceReference } from '../entities/references';
import type { CachedGraph } from '../graph-cache';
import { HubService } from '../hub-service';
import { neighborsOf } from '../neighbors';
import {
  AddEdgeArgs,
  AddNodeArgs,
  CreateHubArgs,
  EdgeIdArgs,
  HubIdArgs,
  ImportHubArgs,
  NeighborsArgs,
  NodeChangesArgs,
  NodeIdArgs,
  QuickAddArgs,
  UpdateHubArgs,
  VersionedNodeArgs,
} from './hub-args';

@RequiresScopes('hubs:read')
@ObjectType({ description: "A page of the caller's hubs, oldest first." })
class HubPage extends PageOf(Hub) {}

@RequiresScopes('hubs:read')
@ObjectType({ description: 'The nodes reached from a node, nearest first, and the edges followed.' })
class HubNeighborhood {
  @Field(() => [HubNode]) nodes!: HubNode[];
  @Field(() => [HubEdge]) edges!: HubEdge[];
  @Field({ description: 'More nodes were reachable than the answer holds (HUB_NEIGHBORS_MAX_NODES).' })
  truncated!: boolean;
  @Field(() => GraphQLJSONObject, {
    description:
      '`{ nodes, edges }` as plain JSON, with the fields of HubNode and HubEdge (as Hub.graph): the same as ' +
      'selecting `nodes` and `edges`, without executing each field of each of up to 500 nodes.',
  })
  graph!: Record<string, unknown>;
}

const userOf = (ctx: SubgraphContext) => ctx.principal!.userId;
/** Left-out (undefined) stays left out; null stays null (cleared), except where a field cannot be. */
const defined = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

@Resolver(() => Hub)
export class HubResolver {
  constructor(
    private readonly service: HubService,
    private readonly emptyTrash: (ownerId: string) => Promise<TrashEmptying> = () => {
      throw new Error('no trash queue');
    },
  ) {}

  @RequiresScopes('hubs:write')
  @Mutation(() => Hub, { description: 'Create an empty hub (version 1).' })
  createHub(@Args() fields: CreateHubArgs, @Ctx() ctx: SubgraphContext): Promise<Hub> {
    return this.service.create(userOf(ctx), fields);
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => Hub, { description: 'A new hub from a JSON Canvas 1.0 document: new ids, the layout kept.' })
  importHub(@Args() { name, description, canvas }: ImportHubArgs, @Ctx() ctx: SubgraphContext): Promise<Hub> {
    const graph = graphFromCanvas(canvas, this.service.limits);
    return this.service.create(userOf(ctx), { name, description }, graph);
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => Hub, {
    description: 'Change name or description at the given version; `conflict` when it has another.',
  })
  updateHub(
    @Args() { id, version }: VersionedIdArgs,
    @Args() changes: UpdateHubArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Hub> {
    const { name, description } = changes;
    return this.service.update(userOf(ctx), id, version, defined({ name: name ?? undefined, description }));
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => Hub, {
    description:
      'Delete the hub at the given version: to the trash, or (permanent) for good, its nodes and edges going in the background.',
  })
  deleteHub(
    @Args() { id, version }: VersionedIdArgs,
    @Arg('permanent', () => Boolean, {
      defaultValue: false,
      description: 'true: deleted at once; false (default): to the trash for TRASH_RETENTION_DAYS.',
    })
    permanent: boolean,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Hub> {
    return this.service.delete(userOf(ctx), id, version, permanent);
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => Hub, { description: 'Bring a hub back from the trash, with its nodes and edges.' })
  restoreHub(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Hub> {
    return this.service.restore(userOf(ctx), id);
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => TrashEntry, { description: 'Delete a hub in the trash for good (hub.deleted).' })
  async purgeHub(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<TrashEntry> {
    const hub = await this.service.purge(userOf(ctx), id);
    return { type: 'hub', id: hub.id, title: hub.name, deletedAt: hub.deletedAt!, purgeAt: new Date() };
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => TrashEmptying, {
    description: 'Purge every hub in your trash, in the background (past JOBS_PENDING_PER_USER: rate_limit_exceeded).',
  })
  emptyHubTrash(@Ctx() ctx: SubgraphContext): Promise<TrashEmptying> {
    return this.emptyTrash(userOf(ctx));
  }

  @RequiresScopes('hubs:read')
  @Query(() => TrashPage, { description: 'Your hubs in the trash, the last trashed first (a part of GET /trash).' })
  trashedHubs(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<TrashEntry>> {
    return this.service.trashed(userOf(ctx), first, after);
  }

  @RequiresScopes('hubs:read')
  @Query(() => Hub, { description: "One of the caller's hubs, with its nodes and edges." })
  hub(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Hub> {
    return this.service.get(userOf(ctx), id);
  }

  @RequiresScopes('hubs:read')
  @Query(() => HubPage, { description: "The caller's hubs, oldest first, a page at a time." })
  hubs(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<Hub>> {
    return this.service.list(userOf(ctx), first, after);
  }

  @RequiresScopes('hubs:read')
  @Query(() => GraphQLJSONObject, { description: 'The hub as a JSON Canvas 1.0 document.' })
  async hubCanvas(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Record<string, unknown>> {
    const hub = await this.service.get(userOf(ctx), id);
    const { nodes, edges } = await this.service.graph(hub);
    return canvasOf(nodes, edges) as Record<string, unknown>;
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => [HubNode], { description: 'Every node, in creation order.' })
  nodes(@Root() hub: Hub, @Ctx() ctx: SubgraphContext, @Info() info: GraphQLResolveInfo): Promise<readonly HubNode[]> {
    return this.listOf(hub, 'nodes', ctx, info);
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => [HubEdge], { description: 'Every edge, in creation order.' })
  edges(@Root() hub: Hub, @Ctx() ctx: SubgraphContext, @Info() info: GraphQLResolveInfo): Promise<readonly HubEdge[]> {
    return this.listOf(hub, 'edges', ctx, info);
  }

  /**
   * The kept graph's nodes or edges; for a selection of leaves only, its answer kept with the graph
   * (lib/plain-lists.ts), which graphql-js then does not complete object by object.
   */
  private async listOf<L extends 'nodes' | 'edges'>(
    hub: Hub,
    list: L,
    ctx: SubgraphContext,
    info: GraphQLResolveInfo,
  ): Promise<CachedGraph[L]> {
    const graph = await this.service.graph(hub);
    const selection = plainSelection(info, ctx);
    const plain = selection && (await this.service.plainList(hub, graph, list, selection));
    return plain ? answerPlainList(info, ctx, plain) : graph[list];
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => GraphQLJSONObject, {
    description:
      '`{ nodes, edges }`: every node and edge as plain JSON, with the fields of HubNode and HubEdge (dates as ' +
      'ISO strings, no references). The same as selecting `nodes` and `edges`, without executing each field of ' +
      'each node: the cheap way to read a large hub whole.',
  })
  async graph(@Root() hub: Hub): Promise<Record<string, unknown>> {
    // The kept graph's own arrays (frozen): built once per graph version, not per request.
    const { nodes, edges } = await this.service.graph(hub);
    return { nodes, edges };
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => GraphQLJSONObject, {
    description:
      'The hub as a JSON Canvas 1.0 document (as hubCanvas). Ref nodes name what they point at by kind and id: ' +
      'select `refNodes { … note { title } vaultItem { title } voice { name } }` beside it for their titles.',
  })
  async canvas(@Root() hub: Hub): Promise<Record<string, unknown>> {
    const { nodes, edges } = await this.service.graph(hub);
    return canvasOf(nodes, edges) as Record<string, unknown>;
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => [HubNode], {
    description: 'The ref nodes only (note, vault_item, voice), in creation order: what the canvas export titles.',
  })
  async refNodes(@Root() hub: Hub): Promise<HubNode[]> {
    return (await this.service.graph(hub)).nodes.filter((n) => isRefType(n.type));
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => String, { description: 'The first 300 characters of the description, for listings.' })
  excerpt(@Root() hub: Hub): string {
    return [...hub.description].slice(0, 300).join('');
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() hub: Hub): UserReference {
    return { id: hub.ownerId };
  }
}

@Resolver(() => HubNode)
export class HubNodeResolver {
  constructor(
    private readonly service: HubService,
    /** The process's per-user gate on expensive operations: neighbours run in it. */
    private readonly expensive: ExpensiveGate,
  ) {}

  @RequiresScopes('hubs:write')
  @Mutation(() => HubNode, { description: 'Add a node (version 1).' })
  addHubNode(@Args() { hubId }: HubIdArgs, @Args() node: AddNodeArgs, @Ctx() ctx: SubgraphContext): Promise<HubNode> {
    return this.service.addNode(userOf(ctx), hubId, { ...node, type: node.type as NodeType });
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => HubNode, { description: 'Change a node at the given version; `conflict` when it has another.' })
  updateHubNode(
    @Args() { hubId, nodeId, version }: VersionedNodeArgs,
    @Args() changes: NodeChangesArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<HubNode> {
    const { x, y, width, height, ...rest } = changes;
    // Layout values cannot be cleared: null is the same as left out.
    const layout = defined({
      x: x ?? undefined,
      y: y ?? undefined,
      width: width ?? undefined,
      height: height ?? undefined,
    });
    return this.service.updateNode(userOf(ctx), hubId, nodeId, version, { ...defined(rest), ...layout });
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => HubNode, { description: 'Remove a node at the given version, and its edges.' })
  removeHubNode(@Args() { hubId, nodeId, version }: VersionedNodeArgs, @Ctx() ctx: SubgraphContext): Promise<HubNode> {
    return this.service.removeNode(userOf(ctx), hubId, nodeId, version);
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => HubNode, {
    description:
      'Add a text or link node beside another (or at the first free place); with capture, into the Vault too.',
  })
  quickAddToHub(
    @Args() { hubId }: HubIdArgs,
    @Args() input: QuickAddArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<HubNode> {
    return this.service.quickAdd(userOf(ctx), hubId, input);
  }

  @RequiresScopes('hubs:read')
  @Query(() => HubNode, { description: 'One node of one of your hubs.' })
  hubNode(@Args() { hubId, nodeId }: NodeIdArgs, @Ctx() ctx: SubgraphContext): Promise<HubNode> {
    return this.service.getNode(userOf(ctx), hubId, nodeId);
  }

  @RequiresScopes('hubs:read')
  @Query(() => HubNeighborhood, {
    description: 'Breadth-first from a node over the edges: depth 1–3, out, in or both.',
  })
  async hubNeighbors(
    @Args() { hubId, nodeId }: NodeIdArgs,
    @Args() { depth, direction }: NeighborsArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<HubNeighborhood> {
    const userId = userOf(ctx);
    const hub = await this.service.get(userId, hubId);
    // Over the hub's graph in memory (read whole, a page at a time, when it is not kept: itself an
    // expensive operation, so taken before this one's slot, never inside it).
    const kept = await this.service.graph(hub);
    const { nodes, edges, truncated } = await this.expensive.run(userId, 'neighbors', () => {
      const graph = this.service.graphs.adjacencyOf(kept);
      const start = graph.nodeById.get(nodeId);
      if (!start) return Promise.reject(new AppError('not_found', 'No such node in this hub.'));
      const { limits } = this.service;
      return Promise.resolve(
        neighborsOf(graph, start, depth, direction, limits.neighborsMaxNodes, limits.neighborsMaxEdges),
      );
    });
    return { nodes, edges, truncated, graph: { nodes, edges } };
  }

  // Entity references: the gateway asks the owning subgraph, whose reference resolver answers
  // null for anything not the caller's (or gone).
  @RequiresScopes('hubs:read')
  @FieldResolver(() => NoteReference, { nullable: true, description: 'A note node: the note (notes subgraph).' })
  note(@Root() node: HubNode): NoteReference | null {
    return node.type === 'note' && node.refId && !node.missing ? { id: node.refId } : null;
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => VaultItemReference, {
    nullable: true,
    description: 'A vault_item node: the item (vault subgraph).',
  })
  vaultItem(@Root() node: HubNode): VaultItemReference | null {
    return node.type === 'vault_item' && node.refId && !node.missing ? { id: node.refId } : null;
  }

  @RequiresScopes('hubs:read')
  @FieldResolver(() => VoiceReference, { nullable: true, description: 'A voice node: the voice (tts subgraph).' })
  voice(@Root() node: HubNode): VoiceReference | null {
    return node.type === 'voice' && node.refId && !node.missing ? { id: node.refId } : null;
  }
}

@Resolver(() => HubEdge)
export class HubEdgeResolver {
  constructor(private readonly service: HubService) {}

  @RequiresScopes('hubs:write')
  @Mutation(() => HubEdge, { description: 'Add an edge between two nodes of the hub.' })
  addHubEdge(@Args() { hubId }: HubIdArgs, @Args() edge: AddEdgeArgs, @Ctx() ctx: SubgraphContext): Promise<HubEdge> {
    return this.service.addEdge(userOf(ctx), hubId, edge);
  }

  @RequiresScopes('hubs:write')
  @Mutation(() => HubEdge, { description: 'Remove an edge.' })
  removeHubEdge(@Args() { hubId, edgeId }: EdgeIdArgs, @Ctx() ctx: SubgraphContext): Promise<HubEdge> {
    return this.service.removeEdge(userOf(ctx), hubId, edgeId);
  }
}
