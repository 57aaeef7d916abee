// The hubs subgraph's projection of what other modules own, fed by their events through one
// durable consumer (lib/event-consumer.ts: a stored position in the event log, advanced in the
// same transaction as the changes, so each event takes effect exactly once however often it is
// offered and however many hubs processes run):
// - `note.created` / `vault.item.captured` / `voice.created`: the thing exists and whose it is
//   (`hub_refs`), so a node may point at it (`ref_id` is checked there, never in their tables);
// - `note.deleted` / `vault.item.deleted` / `voice.deleted`: the row goes, and the nodes pointing
//   at it show `missing: true` (once: only nodes not missing yet change, with one event each);
// - `note.trashed` / `vault.item.trashed` / `hub.trashed`'s kin: a thing in the trash is gone for
//   hubs as if deleted (the ref row goes, nodes show `missing: true`); `note.restored` /
//   `vault.item.restored` bring the ref back and its nodes show `missing: false` again (once:
//   only nodes still missing change). Its later purge's `<type>.deleted` then changes nothing;
// - `vault.item.captured` with `source: { hub_id, node_id }`: the end of quick-add's saga, the
//   node becomes a vault_item node (once: only while it is still the text or link node it was);
// - `user.deleted`: the user's hubs go, as a job on the kit's queue (in batches: hub-jobs.ts).
// A new consumer starts at the beginning of the log; docs/hubs.md has the backfill for a
// deployment whose log no longer holds the oldest events.
import type { DataSource, EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { EventConsumer } from '../../lib/event-consumer';
import type { EventLog, LoggedEvent } from '../../lib/event-log';
import type { Logger } from '../../lib/logger';
import { publish } from '../../lib/kit/typed-events';
import { HubNodeUpdated } from './events';
import { Hub } from './entities/hub';
import { HubNode, RefType } from './entities/hub-node';
import { HubRef } from './entities/hub-ref';
import { HUBS_USER_DELETED } from './hub-jobs';
import type { JobQueue } from '../../lib/kit/jobs';
import { textBytes } from './hub-rules';
import { isUuid } from '../../lib/validators';

export const REFS_CONSUMER = 'hubs.refs';

/** The event types that make a ref exist or go, by the node type that points at it. */
export const REF_EVENTS: Record<string, { kind: RefType; exists: boolean }> = {
  'note.created': { kind: 'note', exists: true },
  'note.deleted': { kind: 'note', exists: false },
  'note.trashed': { kind: 'note', exists: false },
  'note.restored': { kind: 'note', exists: true },
  'vault.item.captured': { kind: 'vault_item', exists: true },
  'vault.item.deleted': { kind: 'vault_item', exists: false },
  'vault.item.trashed': { kind: 'vault_item', exists: false },
  'vault.item.restored': { kind: 'vault_item', exists: true },
  'voice.created': { kind: 'voice', exists: true },
  'voice.deleted': { kind: 'voice', exists: false },
};
export const USER_DELETED = 'user.deleted';

function payloadOf(event: LoggedEvent): Record<string, unknown> {
  try {
    const data: unknown = JSON.parse(event.payload);
    return data && typeof data === 'object' ? (data as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Handles one event inside the consumer's transaction. */
export async function applyEvent(m: EntityManager, event: LoggedEvent, queue: JobQueue): Promise<void> {
  // A deleted user's hubs and refs go in batches (hub-jobs.ts); recorded here exactly once.
  if (event.type === USER_DELETED) {
    await queue.add(m, { kind: HUBS_USER_DELETED, ownerId: event.userId, counted: false });
    return;
  }
  const ref = REF_EVENTS[event.type];
  if (!ref || !isUuid(event.resourceId)) return;
  if (ref.exists) {
    // Idempotent: a ref seen twice (a backfill overlapping the log) stays one row.
    if (!(await m.existsBy(HubRef, { id: event.resourceId })))
      await m.insert(HubRef, { id: event.resourceId, kind: ref.kind, ownerId: event.userId });
    if (event.type === 'vault.item.captured') await finishCapture(m, event);
    if (event.type.endsWith('.restored')) await markMissing(m, event, ref.kind, false);
  } else {
    await m.delete(HubRef, { id: event.resourceId, kind: ref.kind });
    await markMissing(m, event, ref.kind);
  }
}

/**
 * Every node pointing at the deleted (or trashed) thing shows `missing: true`; nodes already
 * missing stay as they are. `missing` false: a restored thing's nodes show it again.
 */
async function markMissing(m: EntityManager, event: LoggedEvent, kind: RefType, missing = true): Promise<void> {
  const nodes = await m.find(HubNode, { where: { refId: event.resourceId, type: kind, missing: !missing } });
  if (!nodes.length) return;
  const now = new Date();
  for (const node of nodes) {
    const result = await m.update(
      HubNode,
      { id: node.id, version: node.version, missing: !missing },
      { missing, version: node.version + 1, updatedAt: now },
    );
    if (!result.affected) continue;
    await publish(m, HubNodeUpdated, {
      userId: event.userId,
      resourceId: node.id,
      data: {
        hub_id: node.hubId,
        node_id: node.id,
        type: node.type,
        version: node.version + 1,
        ref_id: node.refId,
        fields: ['missing'],
      },
    });
  }
  // The graph_version too: the hubs' kept graphs (graph-cache.ts) show the nodes as they were.
  await m.update(
    Hub,
    { id: In([...new Set(nodes.map((n) => n.hubId))]) },
    { updatedAt: now, graphVersion: () => 'graph_version + 1' },
  );
}

/**
 * Quick-add's last step: the text or link node the vault captured becomes a vault_item node
 * pointing at the item. Only a node of the item's owner, and only while it is still a text or
 * link node without a reference: a second delivery (or a retry) changes nothing.
 */
async function finishCapture(m: EntityManager, event: LoggedEvent): Promise<void> {
  const source = payloadOf(event).source as { hub_id?: unknown; node_id?: unknown } | undefined;
  const hubId = typeof source?.hub_id === 'string' ? source.hub_id : undefined;
  const nodeId = typeof source?.node_id === 'string' ? source.node_id : undefined;
  if (!hubId || !nodeId) return;
  const hub = await m.findOneBy(Hub, { id: hubId, ownerId: event.userId });
  if (!hub) return;
  const node = await m.findOneBy(HubNode, { id: nodeId, hubId });
  if (!node || node.refId !== null || !['text', 'link'].includes(node.type)) return;
  const now = new Date();
  const result = await m.update(
    HubNode,
    { id: nodeId, hubId, version: node.version },
    {
      type: 'vault_item',
      refId: event.resourceId,
      text: null,
      url: null,
      missing: false,
      version: node.version + 1,
      updatedAt: now,
    },
  );
  if (!result.affected) return;
  await m
    .createQueryBuilder()
    .update(Hub)
    .set({ textBytes: () => 'text_bytes - :freed', graphVersion: () => 'graph_version + 1', updatedAt: now })
    .where('id = :hubId', { hubId, freed: textBytes(node.text) })
    .execute();
  await publish(m, HubNodeUpdated, {
    userId: event.userId,
    resourceId: nodeId,
    data: {
      hub_id: hubId,
      node_id: nodeId,
      type: 'vault_item',
      version: node.version + 1,
      ref_id: event.resourceId,
      fields: ['type', 'ref_id', node.type === 'text' ? 'text' : 'url'],
      reason: 'captured',
    },
  });
}

export function refsConsumer(options: {
  dataSource: DataSource;
  log: EventLog;
  intervalMs: number;
  maxIntervalMs?: number;
  logger?: Logger;
  queue: JobQueue;
}): EventConsumer {
  return new EventConsumer({
    name: REFS_CONSUMER,
    dataSource: options.dataSource,
    log: options.log,
    types: [...Object.keys(REF_EVENTS), USER_DELETED],
    intervalMs: options.intervalMs,
    maxIntervalMs: options.maxIntervalMs,
    logger: options.logger,
    handle: (m, event) => applyEvent(m, event, options.queue),
  });
}
