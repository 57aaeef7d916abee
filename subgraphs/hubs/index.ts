// The hubs subgraph: a user's graphs of nodes and edges (JSON Canvas 1.0), whose nodes may point
// at notes, vault items and voices. Owns the `hubs` database; meets the other subgraphs only
// through federation references (owner: User, note: Note, vaultItem: VaultItem, voice: Voice)
// and events (refs-projection.ts). Its REST routes (under /api/v1/hubs) are in routes.ts.
import { EventConsumerPosition } from '../../lib/event-consumer';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { UserReference } from '../../lib/user-reference';
import { Hub } from './entities/hub';
import { HubEdge } from './entities/hub-edge';
import { HubNode } from './entities/hub-node';
import { HubDeletion, HubRef } from './entities/hub-ref';
import { UserCap } from '../../lib/kit/user-caps';
import { HubsUserCaps1796000000000 } from './migrations/1796000000000-HubsUserCaps';
import { NoteReference, VaultItemReference, VoiceReference } from './entities/references';
import { HubService } from './hub-service';
import { HubSweeper } from './hub-sweeper';
import { CreateHubTables1795662977876 } from './migrations/1795662977876-CreateHubTables';
import { refsConsumer } from './refs-projection';
import { HubEdgeResolver, HubNodeResolver, HubResolver } from './resolvers/hub-resolver';

export const hubsSubgraph: SubgraphDefinition = {
  name: 'hubs',
  entities: [Hub, HubNode, HubEdge, HubRef, UserCap, HubDeletion, OutboxEvent, EventConsumerPosition],
  migrations: [CreateHubTables1795662977876, HubsUserCaps1796000000000],
  create({ config, dataSource, events, logger }) {
    const sweeper = new HubSweeper(dataSource, logger);
    const service = new HubService(
      dataSource,
      {
        hubsPerUser: config.HUBS_PER_USER,
        maxNodes: config.HUB_MAX_NODES,
        maxEdges: config.HUB_MAX_EDGES,
        maxTextBytes: config.HUB_MAX_TEXT_BYTES,
        nodeTextMaxChars: config.HUB_NODE_TEXT_MAX_CHARS,
        neighborsMaxNodes: config.HUB_NEIGHBORS_MAX_NODES,
      },
      () => sweeper.kick(),
    );
    const refs = refsConsumer({
      dataSource,
      log: events,
      intervalMs: config.EVENT_POLL_MS,
      maxIntervalMs: config.POLL_MAX_IDLE_MS,
      logger,
      onHubsDeleted: () => sweeper.kick(),
    });
    return {
      resolvers: [new HubResolver(service), new HubNodeResolver(service), new HubEdgeResolver(service)],
      orphanedTypes: [UserReference, NoteReference, VaultItemReference, VoiceReference],
      references: {
        // Other subgraphs may point at one; only its owner sees it.
        Hub: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? service.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
      async start() {
        await refs.start();
        sweeper.kick(); // deletions a stopped process left unfinished
      },
      async stop() {
        await refs.stop();
        await sweeper.stop();
      },
    };
  },
};
