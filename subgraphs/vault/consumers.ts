// What the vault subgraph takes from other subgraphs' events, as durable consumers of the event
// log (lib/event-consumer.ts): their position lives in the vault database and moves in the same
// transaction as the changes, so each event is acted on exactly once however many vault
// processes run and however often it is read.
import type { DataSource } from 'typeorm';
import { EventConsumer } from '../../lib/event-consumer';
import type { EventLog, LoggedEvent } from '../../lib/event-log';
import type { Logger } from '../../lib/logger';
import { recordEvent } from '../../lib/outbox';
import { VaultUserDeletion } from './entities/vault-user-deletion';
import type { VaultService } from './vault-service';

interface ConsumerOptions {
  dataSource: DataSource;
  log: EventLog;
  intervalMs: number;
  maxIntervalMs?: number;
  logger?: Logger;
}

/**
 * `user.deleted`: the user's items, files, rules and model go. The event only records the
 * deletion here; the worker removes the rows a batch per transaction (at most 1,000 rows each).
 */
export function userDeletionConsumer(options: ConsumerOptions & { onDeletion: () => void }): EventConsumer {
  return new EventConsumer({
    ...options,
    name: 'vault.user-deleted',
    types: ['user.deleted'],
    handle: async (m, event: LoggedEvent) => {
      await m
        .createQueryBuilder()
        .insert()
        .into(VaultUserDeletion)
        .values({ ownerId: event.userId, requestedAt: new Date() })
        .orIgnore()
        .execute();
      options.onDeletion();
    },
  });
}

/**
 * The hubs quick-add saga, vault side: `hub.capture_requested` (hub_id, node_id, text or url)
 * captures the item naming the node as its source, and `vault.item.captured` carries
 * `source: { hub_id, node_id }` back. A request that cannot be captured (bad input, the cap)
 * answers `vault.capture.refused` with the reason, so the hub does not wait for ever.
 */
export function hubCaptureConsumer(options: ConsumerOptions & { service: VaultService }): EventConsumer {
  return new EventConsumer({
    ...options,
    name: 'vault.hub-capture',
    types: ['hub.capture_requested'],
    handle: async (m, event: LoggedEvent) => {
      let payload: { hub_id?: unknown; node_id?: unknown; text?: unknown; url?: unknown };
      try {
        payload = JSON.parse(event.payload) as typeof payload;
      } catch {
        return;
      }
      const hubId = typeof payload.hub_id === 'string' ? payload.hub_id : null;
      const nodeId = typeof payload.node_id === 'string' ? payload.node_id : event.resourceId;
      if (!hubId || !nodeId) return;
      const text = typeof payload.text === 'string' ? payload.text : null;
      const url = typeof payload.url === 'string' ? payload.url : null;
      const source = { hubId, nodeId };
      try {
        // A savepoint: a refusal must not undo the consumer's own position.
        await m.transaction(() => options.service.captureForNode(m, event.userId, source, { text, url }));
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (!code || code === 'internal_error') throw err; // ours: the batch is retried
        await recordEvent(m, {
          type: 'vault.capture.refused',
          userId: event.userId,
          resourceId: nodeId,
          data: { source: { hub_id: hubId, node_id: nodeId }, reason: code, message: (err as Error).message },
        });
      }
    },
  });
}
