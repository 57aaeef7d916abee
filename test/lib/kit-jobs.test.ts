// The kit's background job queue (lib/kit/jobs.ts) on a real tts database, SQLite or MySQL: a
// deleted user's rows go in batches of at most JOBS_BATCH_ROWS, each batch with its events and its
// per-batch hook in the same transaction; users are served in turn; the per-user limit on pending
// jobs holds under concurrent requests (429 with Retry-After); a runner that dies mid-job leaves
// it to another once its lease ends, and its late batch commits nothing.
import fs from 'node:fs';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { loadConfig, type Config } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { inTransaction } from '../../lib/database/transactions';
import { AppError } from '../../lib/errors';
import { JobQueue, KitJob, KitJobOwner } from '../../lib/kit/jobs';
import { OutboxEvent } from '../../lib/outbox';
import { ttsSubgraph } from '../../subgraphs/tts';
import { DiskAudioStore } from '../../subgraphs/tts/audio/audio-store';
import { Synthesis, SynthesisState } from '../../subgraphs/tts/entities/synthesis';
import { Voice } from '../../subgraphs/tts/entities/voice';
import { deleteUserBatch } from '../../subgraphs/tts/user-cascade';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';
import { audioDir } from '../../subgraphs/tts/settings';

const N = 3;

let config: Config;
let db: DataSource;
const queues: JobQueue[] = [];

beforeAll(async () => {
  config = loadConfig({ ...isolatedEnv(), LOG_LEVEL: 'silent' });
  db = await openDatabase(config, { name: 'tts', entities: ttsSubgraph.entities, migrations: ttsSubgraph.migrations });
}, 60_000);
afterAll(async () => {
  await Promise.all(queues.map((q) => q.stop()));
  await db?.destroy();
  await cleanupDatabases(config);
});

function queue(options: Partial<ConstructorParameters<typeof JobQueue>[0]> = {}): JobQueue {
  const q = new JobQueue({
    dataSource: db,
    pendingPerUser: 100,
    batchRows: N,
    leaseSeconds: 30,
    intervalMs: 50,
    maxIntervalMs: 1000,
    ...options,
  });
  queues.push(q);
  return q;
}

/** A user's voices and finished syntheses (with an audio file each). */
async function seed(ownerId: string, voices: number, syntheses: number): Promise<string[]> {
  const now = new Date();
  const audio: string[] = [];
  await db.manager.insert(
    Voice,
    Array.from({ length: voices }, (_, i) => ({
      id: uuidv7(),
      ownerId,
      name: `v${i}`,
      nameKey: `v${i}`,
      description: null,
      baseVoice: 'f3',
      voiceBlend: null,
      language: 'en',
      speed: 1,
      version: 1,
      createdAt: now,
      updatedAt: now,
    })),
  );
  for (let i = 0; i < syntheses; i++) {
    const id = uuidv7();
    await db.manager.insert(Synthesis, {
      id,
      ownerId,
      state: SynthesisState.SUCCEEDED,
      voiceId: null,
      baseVoice: 'f3',
      language: 'en',
      speed: 1,
      text: 'x',
      characters: 1,
      attempts: 1,
      audioKey: `${id}.wav`,
      createdAt: now,
    });
    const file = path.join(audioDir(config), `${id}.wav`);
    fs.mkdirSync(audioDir(config), { recursive: true });
    fs.writeFileSync(file, 'RIFF');
    audio.push(file);
  }
  return audio;
}

const addCascade = (q: JobQueue, ownerId: string) =>
  inTransaction(db, (m) => q.add(m, { kind: 'tts.user_deleted', ownerId, counted: false }));

it("deletes a deleted user's rows in batches of at most JOBS_BATCH_ROWS, each with its events and hook", async () => {
  const store = new DiskAudioStore(audioDir(config));
  const batches: { removed: Record<string, number>; events: number }[] = [];
  const q = queue({
    // The hook runs in each batch's transaction: the outbox there holds this batch's events too.
    onBatch: async (m, batch) => {
      const events = await m.countBy(OutboxEvent, { type: 'voice.deleted', userId: batch.ownerId });
      batches.push({ removed: batch.removed, events: events - batches.reduce((n, b) => n + b.events, 0) });
    },
  }).register({ kind: 'tts.user_deleted', batch: deleteUserBatch(store) });
  const owner = uuidv7();
  const keeper = uuidv7();
  const audio = await seed(owner, 7, 4);
  await seed(keeper, 2, 1);
  await addCascade(q, owner);
  await q.drain();

  expect(await db.manager.countBy(Voice, { ownerId: owner })).toBe(0);
  expect(await db.manager.countBy(Synthesis, { ownerId: owner })).toBe(0);
  expect(audio.filter((f) => fs.existsSync(f))).toEqual([]);
  expect(await db.manager.countBy(Voice, { ownerId: keeper })).toBe(2);
  expect(await db.manager.countBy(KitJob, { ownerId: owner })).toBe(0);
  // 11 rows at most 3 a batch: 4 batches, voices first; each batch's events are its voices'.
  expect(batches.map((b) => b.removed)).toEqual([
    { voices: 3, syntheses: 0 },
    { voices: 3, syntheses: 0 },
    { voices: 1, syntheses: 2 },
    { voices: 0, syntheses: 2 },
  ]);
  expect(batches.map((b) => b.events)).toEqual([3, 3, 1, 0]);
  const events = await db.manager.findBy(OutboxEvent, { type: 'voice.deleted', userId: owner });
  expect(new Set(events.map((e) => e.resourceId)).size).toBe(7);
  expect(events.every((e) => JSON.parse(e.payload).reason === 'user_deleted')).toBe(true);
});

it('serves users in turn, a batch at a time', async () => {
  const order: string[] = [];
  const left = new Map<string, number>();
  const q = queue().register<{ batches: number }>({
    kind: 'test.work',
    batch: async (ctx) => {
      await ctx.transaction(async () => undefined);
      order.push(ctx.job.ownerId);
      const rest = (left.get(ctx.job.id) ?? ctx.job.params.batches) - 1;
      left.set(ctx.job.id, rest);
      return rest > 0;
    },
  });
  const [a, b, c] = ['a', 'b', 'c'].map((x) => `${x}${uuidv7().slice(1)}`);
  // A asks first, 5 jobs of 3 batches; then B and C one job each.
  for (let i = 0; i < 5; i++) await q.request({ kind: 'test.work', ownerId: a, params: { batches: 3 } });
  await q.request({ kind: 'test.work', ownerId: b, params: { batches: 2 } });
  await q.request({ kind: 'test.work', ownerId: c, params: { batches: 1 } });
  await q.drain();
  expect(order.length).toBe(15 + 2 + 1);
  // B and C are done within the first round or two, not after A's 15 batches.
  expect(order.slice(0, 5).sort()).toEqual([a, a, b, b, c].sort());
  expect(order.lastIndexOf(b)).toBeLessThan(5);
  expect(await db.manager.countBy(KitJob, { kind: 'test.work' })).toBe(0);
  expect((await db.manager.findOneByOrFail(KitJobOwner, { ownerId: a })).pending).toBe(0);
});

it('holds the per-user limit of pending jobs under concurrent requests: 429 with Retry-After beyond it', async () => {
  const q = queue({ pendingPerUser: 5 }).register({ kind: 'test.idle', batch: async () => false });
  const owner = uuidv7();
  const results = await Promise.allSettled(
    Array.from({ length: 30 }, () => q.request({ kind: 'test.idle', ownerId: owner })),
  );
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
  expect(refused).toHaveLength(25);
  for (const err of refused) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('rate_limit_exceeded');
    expect((err as AppError).retryAfter).toBeGreaterThan(0);
  }
  expect(await db.manager.countBy(KitJob, { ownerId: owner })).toBe(5);
  // Done jobs give their place back; system jobs are never refused.
  await q.drain();
  await inTransaction(db, (m) => q.add(m, { kind: 'test.idle', ownerId: owner, counted: false }));
  await expect(q.request({ kind: 'test.idle', ownerId: owner })).resolves.toBeDefined();
  expect((await db.manager.findOneByOrFail(KitJobOwner, { ownerId: owner })).pending).toBe(1);
  await q.drain();
});

it('resumes a job whose runner died once its lease ends; the dead runner commits nothing after', async () => {
  const store = new DiskAudioStore(audioDir(config));
  const handler = { kind: 'tts.user_deleted', batch: deleteUserBatch(store) };
  const dead = queue({ leaseSeconds: 2 }).register(handler);
  const alive = queue({ leaseSeconds: 2 }).register(handler);
  const owner = uuidv7();
  await seed(owner, 5, 0);
  await addCascade(dead, owner);
  // The first runner takes the job and dies before its batch (nothing of it committed).
  const taken = await dead.claimNext();
  expect(taken?.ownerId).toBe(owner);
  // Its lease still runs: no one else takes it.
  expect(await alive.claimNext()).toBeNull();
  await new Promise((r) => setTimeout(r, 2100));
  const retaken = await alive.claimNext();
  expect(retaken?.id).toBe(taken!.id);
  expect(retaken?.takes).toBe(2);
  // The first runner wakes up and runs its batch on its old claim: refused, nothing deleted.
  await (dead as unknown as { runOneBatch(job: KitJob): Promise<void> }).runOneBatch(taken!);
  expect(await db.manager.countBy(Voice, { ownerId: owner })).toBe(5);
  // The second finishes it, each voice deleted (and its event written) once.
  await (alive as unknown as { runOneBatch(job: KitJob): Promise<void> }).runOneBatch(retaken!);
  await alive.drain();
  expect(await db.manager.countBy(Voice, { ownerId: owner })).toBe(0);
  expect(await db.manager.countBy(OutboxEvent, { type: 'voice.deleted', userId: owner })).toBe(5);
  expect(await db.manager.countBy(KitJob, { ownerId: owner })).toBe(0);
}, 30_000);
