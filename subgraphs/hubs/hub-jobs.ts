// The hubs module's work over many rows, on the kit's job queue (lib/kit/jobs.ts), at most
// JOBS_BATCH_ROWS (≤ 1,000) rows a transaction, users served in turn:
// - `hubs.hub_rows`: a deleted hub's edges and nodes (the hub's row went with the request, which
//   recorded this job in its transaction: durable, resumed after a crash);
// - `hubs.user_deleted`: a deleted user's hubs (each with its hub.deleted event, and its rows as a
//   job of their own), then the refs that say what of theirs a node may point at, then their cap counters.
import { In } from 'typeorm';
import type { EntityManager } from 'typeorm';
import type { JobQueue } from '../../lib/kit/jobs';
import type { UserCascadeBatch } from '../../lib/kit/user-cascade';
import { publish } from '../../lib/kit/typed-events';
import { HubDeleted } from './events';
import { Hub } from './entities/hub';
import { HubEdge } from './entities/hub-edge';
import { HubNode } from './entities/hub-node';
import { HubRef } from './entities/hub-ref';
import { UserCaps } from '../../lib/kit/user-caps';
import { HUB_CAPS } from './hub-rules';

export const HUB_ROWS = 'hubs.hub_rows';
export const HUBS_USER_DELETED = 'hubs.user_deleted';

/** Inside a transaction that deleted `hubIds` of `ownerId`: counts them out and asks for their rows to go. */
export async function forgetHubs(m: EntityManager, queue: JobQueue, ownerId: string, hubIds: string[]): Promise<void> {
  if (!hubIds.length) return;
  await new UserCaps(m.connection).release(m, ownerId, HUB_CAPS.hubs.limit, hubIds.length);
  // Not counted against the owner's pending jobs: the hub is gone already, this is its cleanup.
  for (const hubId of hubIds) await queue.add(m, { kind: HUB_ROWS, ownerId, params: { hubId }, counted: false });
}

export function registerHubJobs(queue: JobQueue): void {
  queue.register<{ hubId: string }>({
    kind: HUB_ROWS,
    batch: async (ctx) => {
      const { hubId } = ctx.job.params;
      for (const [entity, resource] of [
        [HubEdge, 'hub_edges'],
        [HubNode, 'hub_nodes'],
      ] as const) {
        const rows = await ctx.dataSource.manager.find(entity, {
          select: { id: true },
          where: { hubId },
          take: ctx.limit,
        });
        if (!rows.length) continue;
        await ctx.transaction(async (m, removed) => {
          await m.delete(entity, { id: In(rows.map((r) => r.id)) });
          removed(resource, rows.length);
        });
        return true;
      }
      return false;
    },
  });
  queue.register({ kind: HUBS_USER_DELETED, batch: userBatch(queue) });
}

function userBatch(queue: JobQueue): UserCascadeBatch {
  return async (ctx) => {
    const userId = ctx.job.ownerId;
    const { manager } = ctx.dataSource;
    const hubs = await manager.find(Hub, { select: { id: true }, where: { ownerId: userId }, take: ctx.limit });
    if (hubs.length) {
      await ctx.transaction(async (m, removed) => {
        // Only what this transaction deletes gets its event.
        const gone = await m.findBy(Hub, { id: In(hubs.map((h) => h.id)), ownerId: userId });
        if (!gone.length) return;
        await m.delete(Hub, { id: In(gone.map((h) => h.id)) });
        for (const hub of gone)
          await publish(m, HubDeleted, {
            userId,
            resourceId: hub.id,
            data: { hub_id: hub.id, name: hub.name, version: hub.version, reason: 'user_deleted' },
          });
        await forgetHubs(
          m,
          queue,
          userId,
          gone.map((h) => h.id),
        );
        removed('hubs', gone.length);
      });
      return true;
    }
    const refs = await manager.find(HubRef, { select: { id: true }, where: { ownerId: userId }, take: ctx.limit });
    if (refs.length) {
      await ctx.transaction((m) => m.delete(HubRef, { id: In(refs.map((r) => r.id)) }));
      return true;
    }
    // The user's cap counters go last, once their hubs are gone.
    await ctx.transaction((m) => new UserCaps(m.connection).forget(m, userId));
    return false;
  };
}
