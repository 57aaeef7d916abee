// The hubs subgraph: a user's graphs of nodes and edges (JSON Canvas 1.0), whose nodes may point
// at notes, vault items and voices. Owns the `hubs` database; meets the other subgraphs only
// through federation references (owner: User, note: Note, vaultItem: VaultItem, voice: Voice)
// and events (refs-projection.ts). Its REST routes (under /api/v1/hubs) are in routes.ts.
import path from 'node:path';
import { migrationsIn } from '../../lib/database/migrations-in';
import { EventConsumerPosition } from '../../lib/event-consumer';
import { declareExpensiveFields, sharedExpensiveGate } from '../../lib/kit/expensive';
import { JOB_ENTITIES } from '../../lib/kit/jobs';
import { jobQueue } from '../../lib/kit/user-cascade';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { UserReference } from '../../lib/user-reference';
import { Hub } from './entities/hub';
import { HubEdge } from './entities/hub-edge';
import { HubNode } from './entities/hub-node';
import { HubRef } from './entities/hub-ref';
import { UserCap } from '../../lib/kit/user-caps';
import { NoteReference, VaultItemReference, VoiceReference } from './entities/references';
import { HubService } from './hub-service';
import { registerHubJobs } from './hub-jobs';
import { PurgeParams, requestEmptyTrash, TrashRetention } from '../../lib/kit/trash';
import { refsConsumer } from './refs-projection';
import { HubEdgeResolver, HubNodeResolver, HubResolver } from './resolvers/hub-resolver';

const HUBS_TRASH_PURGE = 'hubs.trash_purge';

export const hubsSubgraph: SubgraphDefinition = {
  name: 'hubs',
  entities: [Hub, HubNode, HubEdge, HubRef, UserCap, ...JOB_ENTITIES, OutboxEvent, EventConsumerPosition],
  migrations: migrationsIn(path.join(__dirname, 'migrations')),
  create({ config, dataSource, events, logger }) {
    // A deleted hub's rows and a deleted user's hubs: the kit's fair queue, in batches (hub-jobs.ts).
    const queue = jobQueue({ config, dataSource, logger });
    registerHubJobs(queue);
    const expensive = sharedExpensiveGate(config);
    declareExpensiveFields([{ type: 'Query', field: 'hubNeighbors', kind: 'neighbors' }]);
    const service = new HubService(
      dataSource,
      {
        hubsPerUser: config.HUBS_PER_USER,
        maxNodes: config.HUB_MAX_NODES,
        maxEdges: config.HUB_MAX_EDGES,
        maxTextBytes: config.HUB_MAX_TEXT_BYTES,
        nodeTextMaxChars: config.HUB_NODE_TEXT_MAX_CHARS,
        neighborsMaxNodes: config.HUB_NEIGHBORS_MAX_NODES,
        neighborsMaxEdges: config.HUB_NEIGHBORS_MAX_EDGES,
        trashRetentionDays: config.TRASH_RETENTION_DAYS,
        graphCacheBytes: config.HUB_GRAPH_CACHE_BYTES,
        graphSelections: config.HUB_GRAPH_SELECTIONS,
      },
      queue,
      expensive,
    );
    // The trash's purges (by retention, or an emptied trash), in batches on the same queue.
    queue.register<PurgeParams>({ kind: HUBS_TRASH_PURGE, batch: service.purgeBatch });
    const retention = new TrashRetention({
      dataSource,
      queue,
      kind: HUBS_TRASH_PURGE,
      entity: Hub,
      retentionDays: config.TRASH_RETENTION_DAYS,
      logger,
    });
    service.onTrashed = (at) => retention.trashed(at);
    const refs = refsConsumer({
      dataSource,
      log: events,
      intervalMs: config.EVENT_POLL_MS,
      maxIntervalMs: config.POLL_MAX_IDLE_MS,
      logger,
      queue,
    });
    return {
      resolvers: [
        new HubResolver(service, (ownerId) => requestEmptyTrash(queue, HUBS_TRASH_PURGE, ownerId)),
        new HubNodeResolver(service, expensive),
        new HubEdgeResolver(service),
      ],
      orphanedTypes: [UserReference, NoteReference, VaultItemReference, VoiceReference],
      references: {
        // Other subgraphs may point at one; only its owner sees it.
        Hub: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? service.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
      async start() {
        queue.start();
        await refs.start();
        await retention.start();
      },
      async stop() {
        retention.stop();
        await refs.stop();
        await queue.stop();
      },
    };
  },
};
