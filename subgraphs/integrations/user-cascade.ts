// A deleted user's webhooks, with their deliveries and attempt log, on the kit's job queue
// (lib/kit/jobs.ts): the fan-out (webhook-fanout.ts), which sees `user.deleted` in log order,
// disables the user's webhooks at once (nothing more is fanned out to them or delivered) and
// records this job in the same transaction; the job removes the rows a batch per transaction.
import { In } from 'typeorm';
import type { EntityManager } from 'typeorm';
import type { JobQueue } from '../../lib/kit/jobs';
import type { UserCascadeBatch } from '../../lib/kit/user-cascade';
import { UserCap, UserCaps } from '../../lib/kit/user-caps';
import { WebhookAttempt } from './entities/webhook-attempt';
import { WebhookDelivery } from './entities/webhook-delivery';
import { Webhook } from './entities/webhook';

export const INTEGRATIONS_USER_DELETED = 'integrations.user_deleted';

/** In the fan-out's transaction: the user's webhooks stop at once, their rows go in the background. */
export async function forgetUser(m: EntityManager, queue: JobQueue, userId: string): Promise<void> {
  await m.update(
    Webhook,
    { ownerId: userId },
    { enabled: false, disabledReason: 'user_deleted', updatedAt: new Date() },
  );
  await queue.add(m, { kind: INTEGRATIONS_USER_DELETED, ownerId: userId, counted: false });
}

const deleteBatch: UserCascadeBatch = async (ctx) => {
  const { manager } = ctx.dataSource;
  // At most WEBHOOKS_PER_USER of them.
  const hooks = await manager.find(Webhook, { select: { id: true }, where: { ownerId: ctx.job.ownerId } });
  if (!hooks.length) {
    // No webhook left: the user's cap counters go, if any outlived them (a webhook deleted earlier).
    if (await manager.existsBy(UserCap, { ownerId: ctx.job.ownerId }))
      await ctx.transaction((m) => new UserCaps(m.connection).forget(m, ctx.job.ownerId));
    return false;
  }
  const webhookId = In(hooks.map((h) => h.id));
  for (const [entity, resource] of [
    [WebhookAttempt, 'webhook_attempts'],
    [WebhookDelivery, 'webhook_deliveries'],
  ] as const) {
    const rows = await manager.find(entity, { select: { id: true }, where: { webhookId }, take: ctx.limit });
    if (!rows.length) continue;
    await ctx.transaction(async (m, removed) => {
      await m.delete(entity, { id: In(rows.map((r) => r.id)) });
      removed(resource, rows.length);
    });
    return true;
  }
  const batch = hooks.slice(0, ctx.limit);
  const last = batch.length === hooks.length;
  await ctx.transaction(async (m, removed) => {
    removed('webhooks', (await m.delete(Webhook, { id: In(batch.map((h) => h.id)) })).affected ?? 0);
    // The last batch: the user's cap counters go with their webhooks.
    if (last) await new UserCaps(m.connection).forget(m, ctx.job.ownerId);
  });
  return !last;
};

export function registerUserCascade(queue: JobQueue): void {
  queue.register({ kind: INTEGRATIONS_USER_DELETED, batch: deleteBatch });
}
