// The hubs module's rules. Every change and its event are written in one transaction (the
// outbox, lib/outbox.ts). A write to a hub's nodes or edges first updates the hub's row with its
// counts, under the caps (`… WHERE node_count + n <= max`): that one statement enforces the caps
// and serialises the writes of one hub (the row stays locked until the commit), so an edge never
// joins a node being removed and two adds never both take the last place.
import { UserCaps } from '../../lib/kit/user-caps';
import { lostAtVersion, staleVersion } from '../../lib/kit/versioned';
import { v7 as uuidv7 } from 'uuid';
import { DataSource, EntityManager, In, IsNull, Not } from 'typeorm';
import type { BatchContext } from '../../lib/kit/jobs';
import { purgeAt, PurgeParams, TrashEntry, trashPage } from '../../lib/kit/trash';
import { affectedRows } from '../../lib/database/portable';
import { persistedValue } from '../../lib/database/reads';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import type { ExpensiveGate } from '../../lib/kit/expensive';
import type { JobQueue } from '../../lib/kit/jobs';
import { publish } from '../../lib/kit/typed-events';
import {
  HubCaptureRequested,
  HubCreated,
  HubDeleted,
  HubEdgeAdded,
  HubEdgeRemoved,
  HubNodeAdded,
  HubNodeRemoved,
  HubNodeUpdated,
  HubRestored,
  HubTrashed,
  HubUpdated,
} from './events';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import { buildPlainList, PlainList, PlainSelection } from '../../lib/plain-lists';
import { Hub } from './entities/hub';
import { HubEdge } from './entities/hub-edge';
import { HubNode, isRefType, NodeType } from './entities/hub-node';
import { HubRef } from './entities/hub-ref';
import { CachedGraph, GraphCache } from './graph-cache';
import { keepRestText } from './rest-form';
import { GraphReads } from './graph-reads';
import { forgetHubs } from './hub-jobs';
import { capReached, charCount, hubCap, HubLimits, isHttpUrl, textBytes } from './hub-rules';

/** Oldest first: ids are UUIDv7, in creation order. */
const ORDER: PageOrder<Hub> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'ASC' };
/** Rows per INSERT statement when a whole canvas is written. */
const INSERT_CHUNK = 500;
/** How far right of its neighbour a quick-added node goes. */
const GAP = 80;

export interface HubFields {
  name: string;
  description?: string | null;
}

export interface NodeInput {
  type: NodeType;
  x: number;
  y: number;
  width: number;
  height: number;
  color?: string | null;
  label?: string | null;
  text?: string | null;
  url?: string | null;
  refId?: string | null;
}

export type NodeChanges = Partial<Omit<NodeInput, 'type'>>;

export interface EdgeInput {
  fromNode: string;
  toNode: string;
  fromSide?: string | null;
  toSide?: string | null;
  fromEnd?: string | null;
  toEnd?: string | null;
  label?: string | null;
  color?: string | null;
}

export interface QuickAddInput {
  text?: string | null;
  url?: string | null;
  nearNodeId?: string | null;
  capture?: boolean | null;
}

/** A whole graph to write at once (an import): nodes and edges already checked, with fresh ids. */
export interface GraphRows {
  nodes: NodeInput[];
  edges: (EdgeInput & { fromIndex: number; toIndex: number })[];
}

/** The values given (undefined: not given), strings trimmed. */
const given = <T extends object>(fields: T): Partial<T> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;

const hubEventData = (hub: Hub, fields?: string[]) => ({
  hub_id: hub.id,
  name: hub.name,
  version: hub.version,
  node_count: hub.nodeCount,
  edge_count: hub.edgeCount,
  ...(fields ? { fields } : {}),
});
/** Ids and names of fields, never texts (contract: event payloads). */
const nodeEventData = (node: HubNode, fields?: string[]) => ({
  hub_id: node.hubId,
  node_id: node.id,
  type: node.type,
  version: node.version,
  ...(node.refId ? { ref_id: node.refId } : {}),
  ...(fields ? { fields } : {}),
});
const edgeEventData = (edge: HubEdge) => ({
  hub_id: edge.hubId,
  edge_id: edge.id,
  from_node: edge.fromNode,
  to_node: edge.toNode,
});

export class HubService {
  readonly reads: GraphReads;

  constructor(
    readonly dataSource: DataSource,
    readonly limits: HubLimits,
    /** Where a deleted hub's nodes and edges are asked to go (in the background: hub-jobs.ts). */
    private readonly jobs: JobQueue,
    /** The process's per-user gate on expensive operations: reading a whole graph that is not kept runs in it. */
    private readonly expensive?: ExpensiveGate,
  ) {
    this.reads = new GraphReads(dataSource);
    this.caps = new UserCaps(dataSource);
    this.graphs = new GraphCache(limits.graphCacheBytes, limits.graphSelections);
  }

  private readonly caps: UserCaps;
  /** Whole graphs by hub, at their graph version (graph-cache.ts). */
  readonly graphs: GraphCache;
  /** Reads of whole graphs under way, by hub: concurrent requests for one graph share one read. */
  private readonly loading = new Map<string, { version: number; graph: Promise<CachedGraph> }>();

  // ---- hubs ---------------------------------------------------------------------------------

  async create(ownerId: string, fields: HubFields, graph?: GraphRows): Promise<Hub> {
    const now = new Date();
    const nodes = graph?.nodes ?? [];
    const hub = this.dataSource.manager.create(Hub, {
      id: uuidv7(),
      ownerId,
      name: fields.name.trim(),
      description: fields.description?.trim() ?? '',
      nodeCount: nodes.length,
      edgeCount: graph?.edges.length ?? 0,
      textBytes: nodes.reduce((sum, n) => sum + textBytes(n.text), 0),
      version: 1,
      graphVersion: 0,
      createdAt: now,
      updatedAt: now,
    });
    if (hub.nodeCount > this.limits.maxNodes) throw capReached('nodes', this.limits.maxNodes, 0);
    if (hub.edgeCount > this.limits.maxEdges) throw capReached('edges', this.limits.maxEdges, 0);
    if (hub.textBytes > this.limits.maxTextBytes) throw capReached('text_bytes', this.limits.maxTextBytes, 0);
    const cap = hubCap('hubs', this.limits.hubsPerUser);
    await this.caps.prepare(ownerId, [cap.limit]);
    return inTransaction(this.dataSource, async (m) => {
      await this.caps.take(m, ownerId, { cap });
      await m.insert(Hub, hub);
      if (graph) await this.insertGraph(m, hub, graph, now);
      await publish(m, HubCreated, { userId: ownerId, resourceId: hub.id, data: hubEventData(hub) });
      return hub;
    });
  }

  /**
   * An imported canvas: its nodes and edges with fresh ids, in multi-row INSERTs of plain SQL
   * (TypeORM's insert of 25,000 entities spent seconds building parameters).
   */
  private async insertGraph(m: EntityManager, hub: Hub, graph: GraphRows, now: Date): Promise<void> {
    const stamp = persistedValue(this.dataSource, HubNode, 'createdAt', now);
    const notMissing = persistedValue(this.dataSource, HubNode, 'missing', false);
    const nodeIds = graph.nodes.map(() => uuidv7());
    await insertRows(
      m,
      'hub_nodes',
      [
        'id',
        'hub_id',
        'type',
        'x',
        'y',
        'width',
        'height',
        'color',
        'label',
        'text',
        'url',
        'ref_id',
        'missing',
        'version',
        'created_at',
        'updated_at',
      ],
      graph.nodes.map((n, i) => [
        nodeIds[i],
        hub.id,
        n.type,
        n.x,
        n.y,
        n.width,
        n.height,
        n.color ?? null,
        n.label ?? null,
        n.text ?? null,
        n.url ?? null,
        null,
        notMissing,
        1,
        stamp,
        stamp,
      ]),
    );
    await insertRows(
      m,
      'hub_edges',
      [
        'id',
        'hub_id',
        'from_node',
        'to_node',
        'from_side',
        'to_side',
        'from_end',
        'to_end',
        'label',
        'color',
        'created_at',
      ],
      graph.edges.map((e) => [
        uuidv7(),
        hub.id,
        nodeIds[e.fromIndex],
        nodeIds[e.toIndex],
        e.fromSide ?? null,
        e.toSide ?? null,
        e.fromEnd ?? null,
        e.toEnd ?? null,
        e.label ?? null,
        e.color ?? null,
        stamp,
      ]),
    );
  }

  /** Another user's hub is `not_found`, exactly like an unknown id. */
  async get(ownerId: string, id: string, m: EntityManager = this.dataSource.manager): Promise<Hub> {
    const hub = await m.findOneBy(Hub, { id, ownerId, deletedAt: IsNull() });
    if (!hub) throw new AppError('not_found', 'No such hub.');
    return hub;
  }

  list(ownerId: string, limit: number, cursor?: string | null): Promise<Page<Hub>> {
    const query = this.dataSource.manager
      .createQueryBuilder(Hub, 'item')
      .where('item.ownerId = :ownerId AND item.deletedAt IS NULL', { ownerId });
    return pageOf(query, ORDER, limit, cursor);
  }

  /**
   * The hub's whole graph (nodes in creation order, the canvas's z-order; edges in creation order),
   * as of no earlier than `hub` was read: kept in memory at its graph version, read a page at a
   * time when it is not (graph-reads.ts). The objects are frozen and shared between requests.
   */
  graph(hub: Hub): Promise<CachedGraph> {
    const version = hub.graphVersion;
    const kept = this.graphs.get(hub.id, version);
    if (kept) return Promise.resolve(kept);
    const under = this.loading.get(hub.id);
    if (under && under.version === version) return under.graph;
    // A read of 25,000 rows is an expensive operation of the hub's owner (one slot for every
    // request that joins it): distinct big hubs read at once by one user are bounded like searches.
    // Kept only when no write came between its pages, under the version read before them; with
    // its REST JSON, built in chunks within the same slot (rest-form.ts), counted in its bytes.
    const read = async () => {
      const { graph, steady } = await this.reads.graphOf(hub.id);
      if (!steady || graph.version !== version) return graph;
      const textBytes = await keepRestText(graph.nodes, graph.edges);
      const kept = { ...graph, bytes: graph.bytes + textBytes };
      this.graphs.put(hub.id, kept);
      return kept;
    };
    const graph = this.expensive ? this.expensive.run(hub.ownerId, 'export', read) : read();
    const entry = { version, graph };
    this.loading.set(hub.id, entry);
    const done = () => {
      if (this.loading.get(hub.id) === entry) this.loading.delete(hub.id);
    };
    graph.then(done, done);
    return graph;
  }

  /**
   * The answer of a typed selection of the graph's nodes or edges (lib/plain-lists.ts), kept with
   * the graph; built, a chunk at a time, in an expensive slot of the owner's as the graph's read.
   */
  plainList(
    hub: Hub,
    graph: CachedGraph,
    list: 'nodes' | 'edges',
    selection: PlainSelection,
  ): Promise<PlainList | undefined> {
    const build = () => buildPlainList(graph[list], selection);
    return this.graphs.plainList(hub.id, graph, `${list} ${selection.key}`, () =>
      this.expensive ? this.expensive.run(hub.ownerId, 'export', build) : build(),
    );
  }

  /** The statement checks the version: of concurrent updates at one version, one wins. */
  async update(ownerId: string, id: string, version: number, changes: Partial<HubFields>): Promise<Hub> {
    // A description of null is cleared (stored empty).
    const description = changes.description === undefined ? undefined : (changes.description ?? '').trim();
    const values = given({ name: changes.name?.trim(), description });
    const updated = await inTransaction(this.dataSource, async (m) => {
      const result = await m.update(
        Hub,
        { id, ownerId, version, deletedAt: IsNull() },
        { ...values, version: version + 1, updatedAt: new Date() },
      );
      if (affectedRows(result) !== 1) return null;
      const hub = await m.findOneByOrFail(Hub, { id, ownerId });
      await publish(m, HubUpdated, {
        userId: ownerId,
        resourceId: id,
        data: hubEventData(hub, Object.keys(values)),
      });
      return hub;
    });
    return updated ?? lostAtVersion('hub', version, () => this.get(ownerId, id));
  }

  /**
   * Answers at once: the hub's row goes now, its nodes and edges in the background, at most
   * 1,000 rows a transaction (hub-jobs.ts), as a job recorded with the deletion.
   */
  async delete(ownerId: string, id: string, version: number, permanent = false): Promise<Hub> {
    if (!permanent) return this.trash(ownerId, id, version);
    const hub = await this.get(ownerId, id);
    const won =
      hub.version === version &&
      (await inTransaction(this.dataSource, async (m) => {
        if (affectedRows(await m.delete(Hub, { id, ownerId, version })) !== 1) return false;
        await forgetHubs(m, this.jobs, ownerId, [id]);
        await publish(m, HubDeleted, { userId: ownerId, resourceId: id, data: hubEventData(hub) });
        return true;
      }));
    if (!won) return lostAtVersion('hub', version, () => this.get(ownerId, id));
    return hub;
  }

  /** Told after a commit that put a hub in the trash (the retention purge's timer). */
  onTrashed?: (deletedAt: Date) => void;

  private get retentionDays(): number {
    return this.limits.trashRetentionDays ?? 30;
  }

  /**
   * To the trash with its nodes and edges (a new version, `hub.trashed`): gone from lists and
   * reads, still counted by HUBS_PER_USER until purged.
   */
  private async trash(ownerId: string, id: string, version: number): Promise<Hub> {
    const hub = await this.get(ownerId, id);
    const deletedAt = new Date();
    const trashed: Hub = { ...hub, deletedAt, version: version + 1 };
    const won =
      hub.version === version &&
      (await inTransaction(this.dataSource, async (m) => {
        const result = await m.update(
          Hub,
          { id, ownerId, version, deletedAt: IsNull() },
          { deletedAt, version: trashed.version },
        );
        if (affectedRows(result) !== 1) return false;
        await publish(m, HubTrashed, {
          userId: ownerId,
          resourceId: id,
          data: { ...hubEventData(trashed), purge_at: purgeAt(deletedAt, this.retentionDays).toISOString() },
        });
        return true;
      }));
    if (!won) return lostAtVersion('hub', version, () => this.get(ownerId, id));
    this.onTrashed?.(deletedAt);
    return trashed;
  }

  private async trashedHub(m: EntityManager, ownerId: string, id: string): Promise<Hub> {
    const hub = await m.findOneBy(Hub, { id, ownerId, deletedAt: Not(IsNull()) });
    if (!hub) throw new AppError('not_found', 'No such hub in the trash.');
    return hub;
  }

  /** Brings a trashed hub back as it was, nodes and edges (a new version, `hub.restored`). */
  async restore(ownerId: string, id: string): Promise<Hub> {
    return inTransaction(this.dataSource, async (m) => {
      const hub = await this.trashedHub(m, ownerId, id);
      const restored: Hub = { ...hub, deletedAt: null, version: hub.version + 1, updatedAt: new Date() };
      const result = await m.update(
        Hub,
        { id, ownerId, version: hub.version, deletedAt: Not(IsNull()) },
        { deletedAt: null, version: restored.version, updatedAt: restored.updatedAt },
      );
      if (affectedRows(result) !== 1) throw new AppError('not_found', 'No such hub in the trash.');
      await publish(m, HubRestored, { userId: ownerId, resourceId: id, data: hubEventData(restored) });
      return restored;
    });
  }

  /** In `m`: a trashed hub goes for good (`hub.deleted`), its rows as a job, its slot freed. False: gone meanwhile. */
  private async purgeRow(m: EntityManager, hub: Hub): Promise<boolean> {
    if (affectedRows(await m.delete(Hub, { id: hub.id, ownerId: hub.ownerId, deletedAt: Not(IsNull()) })) !== 1)
      return false;
    await forgetHubs(m, this.jobs, hub.ownerId, [hub.id]);
    await publish(m, HubDeleted, {
      userId: hub.ownerId,
      resourceId: hub.id,
      data: { ...hubEventData(hub), reason: 'purged' },
    });
    return true;
  }

  async purge(ownerId: string, id: string): Promise<Hub> {
    return inTransaction(this.dataSource, async (m) => {
      const hub = await this.trashedHub(m, ownerId, id);
      if (!(await this.purgeRow(m, hub))) throw new AppError('not_found', 'No such hub in the trash.');
      return hub;
    });
  }

  /** The owner's part of the trash (lib/kit/trash.ts: one order and cursor for every part). */
  trashed(ownerId: string, limit: number, cursor?: string | null): Promise<Page<TrashEntry>> {
    const query = this.dataSource.manager
      .createQueryBuilder(Hub, 'item')
      .select(['item.id', 'item.name', 'item.deletedAt'])
      .where('item.ownerId = :ownerId AND item.deletedAt IS NOT NULL', { ownerId });
    return trashPage(query, limit, cursor, (h) => ({ type: 'hub', title: h.name }), this.retentionDays);
  }

  /** One batch of a purge job: the owner's hubs trashed at or before `before`; true while more are left. */
  readonly purgeBatch = async (ctx: BatchContext<PurgeParams>): Promise<boolean> => {
    const due = await this.dataSource.manager
      .createQueryBuilder(Hub, 'item')
      .where('item.ownerId = :ownerId AND item.deletedAt IS NOT NULL AND item.deletedAt <= :before', {
        ownerId: ctx.job.ownerId,
        before: new Date(ctx.job.params.before),
      })
      .orderBy('item.deletedAt', 'ASC')
      .take(ctx.limit)
      .getMany();
    if (!due.length) return false;
    await ctx.transaction(async (m) => {
      for (const hub of due) await this.purgeRow(m, hub);
    });
    return due.length === ctx.limit;
  };

  /**
   * Takes the hub's row for this transaction and moves its counts by the deltas, within the caps;
   * `not_found` for another user's hub, `conflict` with `details.limit` past a cap.
   */
  private async reserve(
    m: EntityManager,
    ownerId: string,
    hubId: string,
    delta: { nodes?: number; edges?: number; textBytes?: number },
  ): Promise<void> {
    const dn = delta.nodes ?? 0;
    const de = delta.edges ?? 0;
    const dt = delta.textBytes ?? 0;
    const { maxNodes, maxEdges, maxTextBytes } = this.limits;
    const result = await m
      .createQueryBuilder()
      .update(Hub)
      .set({
        nodeCount: () => 'node_count + :dn',
        edgeCount: () => 'edge_count + :de',
        textBytes: () => 'text_bytes + :dt',
        // Every write to the hub's nodes or edges comes through here: the kept graph is stale.
        graphVersion: () => 'graph_version + 1',
        updatedAt: new Date(),
      })
      .where('id = :hubId AND owner_id = :ownerId AND deleted_at IS NULL', { hubId, ownerId })
      .andWhere('node_count + :dn <= :maxNodes AND edge_count + :de <= :maxEdges', { maxNodes, maxEdges })
      .andWhere('(:dt <= 0 OR text_bytes + :dt <= :maxTextBytes)', { maxTextBytes })
      .setParameters({ dn, de, dt })
      .execute();
    if (affectedRows(result) === 1) return;
    const hub = await this.get(ownerId, hubId, m);
    if (hub.nodeCount + dn > maxNodes) throw capReached('nodes', maxNodes, hub.nodeCount);
    if (hub.edgeCount + de > maxEdges) throw capReached('edges', maxEdges, hub.edgeCount);
    throw capReached('text_bytes', maxTextBytes, hub.textBytes);
  }

  // ---- nodes --------------------------------------------------------------------------------

  async getNode(ownerId: string, hubId: string, nodeId: string): Promise<HubNode> {
    await this.get(ownerId, hubId);
    return this.nodeIn(this.dataSource.manager, hubId, nodeId);
  }

  private async nodeIn(m: EntityManager, hubId: string, nodeId: string): Promise<HubNode> {
    const node = await m.findOneBy(HubNode, { id: nodeId, hubId });
    if (!node) throw new AppError('not_found', 'No such node in this hub.');
    return node;
  }

  /** What a node of `type` may hold: its type's own field, and no other's. */
  private async checkNode(
    m: EntityManager,
    ownerId: string,
    type: string,
    node: Partial<NodeInput>,
    refChanged = true,
  ): Promise<void> {
    const problems: Record<string, string[]> = {};
    const only = (field: 'text' | 'url' | 'refId', allowed: boolean, required: boolean) => {
      const value = node[field];
      if (!allowed && value !== undefined && value !== null)
        problems[field] = [
          `is only for ${field === 'refId' ? 'note, vault_item and voice' : field === 'text' ? 'text' : 'link'} nodes`,
        ];
      if (allowed && required && (value === undefined || value === null))
        problems[field] = [`is required for a ${type} node`];
    };
    only('text', type === 'text', true);
    only('url', type === 'link', true);
    only('refId', isRefType(type), true);
    if (typeof node.text === 'string' && charCount(node.text) > this.limits.nodeTextMaxChars)
      problems.text = [`must be at most ${this.limits.nodeTextMaxChars} characters`];
    if (typeof node.url === 'string' && !isHttpUrl(node.url)) problems.url = ['must be an http or https URL'];
    if (!Object.keys(problems).length && refChanged && typeof node.refId === 'string' && isRefType(type)) {
      // Only the caller's own notes, vault items and voices, as their modules' events told (the projection).
      const ref = await m.findOneBy(HubRef, { id: node.refId, ownerId, kind: type });
      if (!ref) problems.refId = [`names none of your ${type === 'vault_item' ? 'vault items' : `${type}s`}`];
    }
    if (Object.keys(problems).length) throw validationError(problems);
  }

  /** Checks a new node (its text, URL or reference) before the transaction takes the hub. */
  async addNode(ownerId: string, hubId: string, input: NodeInput): Promise<HubNode> {
    const now = new Date();
    const node = this.dataSource.manager.create(HubNode, {
      id: uuidv7(),
      hubId,
      type: input.type,
      x: input.x,
      y: input.y,
      width: input.width,
      height: input.height,
      color: input.color ?? null,
      label: input.label?.trim() || null,
      text: input.text ?? null,
      url: input.url ?? null,
      refId: input.refId ?? null,
      missing: false,
      version: 1,
      createdAt: now,
      updatedAt: now,
    });
    return inTransaction(this.dataSource, async (m) => {
      await this.reserve(m, ownerId, hubId, { nodes: 1, textBytes: textBytes(node.text) });
      await this.checkNode(m, ownerId, node.type, input);
      await m.insert(HubNode, node);
      await publish(m, HubNodeAdded, { userId: ownerId, resourceId: node.id, data: nodeEventData(node) });
      return node;
    });
  }

  async updateNode(
    ownerId: string,
    hubId: string,
    nodeId: string,
    version: number,
    changes: NodeChanges,
  ): Promise<HubNode> {
    const values = given(changes);
    if (typeof values.label === 'string') values.label = values.label.trim() || null;
    return inTransaction(this.dataSource, async (m) => {
      // The hub is the caller's before anything about its node is looked at: checking the body
      // first answered another user's node with a 400 that named its type (issue 41, finding 11).
      await this.get(ownerId, hubId, m);
      const current = await this.nodeIn(m, hubId, nodeId);
      const merged = { text: current.text, url: current.url, refId: current.refId, ...values };
      await this.checkNode(
        m,
        ownerId,
        current.type,
        merged,
        values.refId !== undefined && values.refId !== current.refId,
      );
      const dt = values.text !== undefined ? textBytes(values.text) - textBytes(current.text) : 0;
      await this.reserve(m, ownerId, hubId, { textBytes: dt });
      // A new reference points at something that exists now (checked above).
      const missing = values.refId !== undefined && values.refId !== current.refId ? { missing: false } : {};
      const result = await m.update(
        HubNode,
        { id: nodeId, hubId, version },
        { ...values, ...missing, version: version + 1, updatedAt: new Date() },
      );
      if (affectedRows(result) !== 1)
        await lostAtVersion('node', version, () => m.findOneBy(HubNode, { id: nodeId, hubId }));
      const node = await m.findOneByOrFail(HubNode, { id: nodeId });
      await publish(m, HubNodeUpdated, {
        userId: ownerId,
        resourceId: nodeId,
        data: nodeEventData(node, Object.keys(values)),
      });
      return node;
    });
  }

  /** The node and its edges, in one transaction. */
  async removeNode(ownerId: string, hubId: string, nodeId: string, version: number): Promise<HubNode> {
    return inTransaction(this.dataSource, async (m) => {
      await this.get(ownerId, hubId, m);
      const node = await this.nodeIn(m, hubId, nodeId);
      if (node.version !== version) throw staleVersion('node', node.version, version);
      const edges = await m.find(HubEdge, {
        select: { id: true },
        where: [
          { hubId, fromNode: nodeId },
          { hubId, toNode: nodeId },
        ],
      });
      await this.reserve(m, ownerId, hubId, { nodes: -1, edges: -edges.length, textBytes: -textBytes(node.text) });
      if (affectedRows(await m.delete(HubNode, { id: nodeId, hubId, version })) !== 1)
        await lostAtVersion('node', version, () => m.findOneBy(HubNode, { id: nodeId, hubId }));
      for (let i = 0; i < edges.length; i += INSERT_CHUNK)
        await m.delete(HubEdge, { id: In(edges.slice(i, i + INSERT_CHUNK).map((e) => e.id)) });
      await publish(m, HubNodeRemoved, {
        userId: ownerId,
        resourceId: nodeId,
        data: { ...nodeEventData(node), edges_removed: edges.length },
      });
      return node;
    });
  }

  // ---- edges --------------------------------------------------------------------------------

  async addEdge(ownerId: string, hubId: string, input: EdgeInput): Promise<HubEdge> {
    const edge = this.dataSource.manager.create(HubEdge, {
      id: uuidv7(),
      hubId,
      fromNode: input.fromNode,
      toNode: input.toNode,
      fromSide: input.fromSide ?? null,
      toSide: input.toSide ?? null,
      fromEnd: input.fromEnd ?? null,
      toEnd: input.toEnd ?? null,
      label: input.label?.trim() || null,
      color: input.color ?? null,
      createdAt: new Date(),
    });
    return inTransaction(this.dataSource, async (m) => {
      await this.reserve(m, ownerId, hubId, { edges: 1 });
      const ends = await m.find(HubNode, {
        select: { id: true },
        where: { hubId, id: In([edge.fromNode, edge.toNode]) },
      });
      const found = new Set(ends.map((n) => n.id));
      const problems: Record<string, string[]> = {};
      if (!found.has(edge.fromNode)) problems.fromNode = ['is not a node of this hub'];
      if (!found.has(edge.toNode)) problems.toNode = ['is not a node of this hub'];
      if (Object.keys(problems).length)
        throw validationError(problems, 'Both ends of an edge must be nodes of its hub.');
      await m.insert(HubEdge, edge);
      await publish(m, HubEdgeAdded, { userId: ownerId, resourceId: edge.id, data: edgeEventData(edge) });
      return edge;
    });
  }

  async removeEdge(ownerId: string, hubId: string, edgeId: string): Promise<HubEdge> {
    return inTransaction(this.dataSource, async (m) => {
      await this.get(ownerId, hubId, m);
      const edge = await m.findOneBy(HubEdge, { id: edgeId, hubId });
      if (!edge) throw new AppError('not_found', 'No such edge in this hub.');
      await this.reserve(m, ownerId, hubId, { edges: -1 });
      if (affectedRows(await m.delete(HubEdge, { id: edgeId, hubId })) !== 1)
        throw new AppError('not_found', 'No such edge in this hub.');
      await publish(m, HubEdgeRemoved, {
        userId: ownerId,
        resourceId: edgeId,
        data: edgeEventData(edge),
      });
      return edge;
    });
  }

  // ---- quick-add ----------------------------------------------------------------------------

  /**
   * A text or link node right of `nearNodeId` (with an edge from it), or right of everything.
   * With `capture`, `hub.capture_requested` asks the vault to capture it too; the vault's
   * `vault.item.captured` naming this node then turns it into a vault_item node (refs-projection.ts).
   */
  async quickAdd(ownerId: string, hubId: string, input: QuickAddInput): Promise<HubNode> {
    const hasText = typeof input.text === 'string';
    const hasUrl = typeof input.url === 'string';
    if (hasText === hasUrl) throw validationError({ text: ['give exactly one of text and url'] });
    const type: NodeType = hasText ? 'text' : 'link';
    const now = new Date();
    return inTransaction(this.dataSource, async (m) => {
      const near = input.nearNodeId ? await m.findOneBy(HubNode, { id: input.nearNodeId, hubId }) : null;
      if (input.nearNodeId && !near) {
        await this.get(ownerId, hubId, m);
        throw validationError({ nearNodeId: ['is not a node of this hub'] });
      }
      const content = hasText ? { text: input.text! } : { url: input.url!.trim() };
      await this.reserve(m, ownerId, hubId, { nodes: 1, edges: near ? 1 : 0, textBytes: textBytes(content.text) });
      await this.checkNode(m, ownerId, type, content);
      const place = near ? { x: near.x + near.width + GAP, y: near.y } : await this.freePlace(m, hubId);
      const node = m.create(HubNode, {
        id: uuidv7(),
        hubId,
        type,
        ...place,
        width: type === 'text' ? 250 : 400,
        height: type === 'text' ? 60 : 300,
        color: null,
        label: null,
        text: content.text ?? null,
        url: content.url ?? null,
        refId: null,
        missing: false,
        version: 1,
        createdAt: now,
        updatedAt: now,
      });
      await m.insert(HubNode, node);
      await publish(m, HubNodeAdded, { userId: ownerId, resourceId: node.id, data: nodeEventData(node) });
      if (near) {
        const edge = m.create(HubEdge, {
          id: uuidv7(),
          hubId,
          fromNode: near.id,
          toNode: node.id,
          fromSide: 'right',
          toSide: 'left',
          fromEnd: null,
          toEnd: null,
          label: null,
          color: null,
          createdAt: now,
        });
        await m.insert(HubEdge, edge);
        await publish(m, HubEdgeAdded, {
          userId: ownerId,
          resourceId: edge.id,
          data: edgeEventData(edge),
        });
      }
      if (input.capture)
        await publish(m, HubCaptureRequested, {
          userId: ownerId,
          resourceId: node.id,
          data: { hub_id: hubId, node_id: node.id, ...content },
        });
      return node;
    });
  }

  /** Right of the hub's rightmost node, level with its top; the origin in an empty hub. */
  private async freePlace(m: EntityManager, hubId: string): Promise<{ x: number; y: number }> {
    const row = await m
      .createQueryBuilder(HubNode, 'n')
      .select('MAX(n.x + n.width)', 'right')
      .addSelect('MIN(n.y)', 'top')
      .where('n.hubId = :hubId', { hubId })
      .getRawOne<{ right: number | string | null; top: number | string | null }>();
    if (row?.right === null || row?.right === undefined) return { x: 0, y: 0 };
    return { x: Math.min(Number(row.right) + GAP, 2147483647 - 400), y: Number(row.top) };
  }
}

/** Rows as multi-row INSERTs with bound parameters, INSERT_CHUNK rows a statement. */
async function insertRows(m: EntityManager, table: string, columnNames: string[], rows: unknown[][]): Promise<void> {
  const one = `(${columnNames.map(() => '?').join(', ')})`;
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    await m.query(
      `INSERT INTO ${table} (${columnNames.join(', ')}) VALUES ${chunk.map(() => one).join(', ')}`,
      chunk.flat(),
    );
  }
}
