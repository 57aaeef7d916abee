// What the vault subgraph takes from other subgraphs' events, as durable consumers of the event
// log (lib/event-consumer.ts): their position lives in the vault database and moves in the same
// transaction as the changes, so each event is acted on exactly once however many vault
// processes run and however often it is read.
import { In, type DataSource } from 'typeorm';
import type { BlobStore } from '../../lib/blob-store';
import type { Config } from '../../lib/config';
import { EventConsumer } from '../../lib/event-consumer';
import type { EventLog, LoggedEvent } from '../../lib/event-log';
import type { Logger } from '../../lib/logger';
import { publish } from '../../lib/kit/typed-events';
import { VaultCaptureRefused } from './events';
import type { JobQueue } from '../../lib/kit/jobs';
import { userCascade, UserCascadeBatch } from '../../lib/kit/user-cascade';
import { UserCaps } from '../../lib/kit/user-caps';
import { VaultClassifier } from './entities/vault-classifier';
import { VaultItem } from './entities/vault-item';
import { VaultItemTag } from './entities/vault-item-tag';
import { VaultRule } from './entities/vault-rule';
import type { VaultCapture } from './capture';

interface ConsumerOptions {
  dataSource: DataSource;
  log: EventLog;
  intervalMs: number;
  maxIntervalMs?: number;
  logger?: Logger;
}

/**
 * `user.deleted`: the user's items, files, rules and model go, through the kit's cascade
 * (lib/kit/user-cascade.ts): the event records a job, the job queue removes the rows a batch per
 * transaction (at most JOBS_BATCH_ROWS, ≤ 1,000), the files of a batch just before it.
 */
export function userDeletionConsumer(
  options: ConsumerOptions & { queue: JobQueue; config: Config; store: BlobStore },
): EventConsumer {
  return userCascade({ module: 'vault', ...options, batch: deleteUserBatch(options.store, options.logger) });
}

function deleteUserBatch(store: BlobStore, logger?: Logger): UserCascadeBatch {
  return async (ctx) => {
    const ownerId = ctx.job.ownerId;
    const batch = await ctx.dataSource.manager.find(VaultItem, {
      select: { id: true, blobKey: true, sizeBytes: true },
      where: { ownerId },
      take: ctx.limit,
    });
    // Once the items are gone, the rules, a batch at a time too.
    const rules = batch.length
      ? []
      : await ctx.dataSource.manager.find(VaultRule, { select: { id: true }, where: { ownerId }, take: ctx.limit });
    // The files first: if the transaction then fails, the rows stay and the next batch deletes them.
    for (const item of batch) if (item.blobKey) await store.delete(item.blobKey);
    await ctx.transaction(async (m, removed) => {
      if (batch.length) {
        const ids = batch.map((i) => i.id);
        await m.delete(VaultItemTag, { itemId: In(ids) });
        await m.delete(VaultItem, { id: In(ids) });
        removed('vault_items', batch.length);
        removed(
          'vault_file_bytes',
          batch.reduce((n, i) => n + (i.blobKey ? (i.sizeBytes ?? 0) : 0), 0),
        );
      } else if (rules.length) {
        removed('vault_rules', (await m.delete(VaultRule, { id: In(rules.map((r) => r.id)) })).affected ?? 0);
      } else {
        await m.delete(VaultClassifier, { ownerId });
        // The last batch: the user's cap counters go, once their items and rules are gone.
        await new UserCaps(m.connection).forget(m, ownerId);
      }
    });
    const more = batch.length > 0 || rules.length > 0;
    if (!more) logger?.info({ ownerId }, "deleted user's vault removed");
    return more;
  };
}

/**
 * The hubs quick-add saga, vault side: `hub.capture_requested` (hub_id, node_id, text or url)
 * captures the item naming the node as its source, and `vault.item.captured` carries
 * `source: { hub_id, node_id }` back. A request that cannot be captured (bad input, the cap)
 * answers `vault.capture.refused` with the reason, so the hub does not wait for ever.
 */
export function hubCaptureConsumer(options: ConsumerOptions & { capture: VaultCapture }): EventConsumer {
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
        await m.transaction(() => options.capture.captureForNode(m, event.userId, source, { text, url }));
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (!code || code === 'internal_error') throw err; // ours: the batch is retried
        await publish(m, VaultCaptureRefused, {
          userId: event.userId,
          resourceId: nodeId,
          data: { source: { hub_id: hubId, node_id: nodeId }, reason: code, message: (err as Error).message },
        });
      }
    },
  });
}
