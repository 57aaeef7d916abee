// Job runners when wake-ups cross processes (EVENT_LOG_URL: lib/wakeups.ts over NATS; here an
// in-memory transport stands for it): an idle runner does not poll its table, a new job wakes
// every runner of the module through the transport, and a job whose runner died is retaken when
// its lease ends, by a runner that was told of nothing.
import type { DataSource } from 'typeorm';
import { loadConfig, type Config } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { inTransaction } from '../../lib/database/transactions';
import { JobQueue, KitJob } from '../../lib/kit/jobs';
import { clearWakeTransport, setWakeTransport, WakeTransport } from '../../lib/wakeups';
import { ttsSubgraph } from '../../subgraphs/tts';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';
import { until } from '../helpers/wait';

let config: Config;
let db: DataSource;
const queues: JobQueue[] = [];
const listeners = new Map<string, Set<() => void>>();
const notified: string[] = [];
const bus: WakeTransport = {
  notify(topic) {
    notified.push(topic);
    for (const l of listeners.get(topic) ?? []) setImmediate(l);
  },
  listen(topic, listener) {
    if (!listeners.has(topic)) listeners.set(topic, new Set());
    listeners.get(topic)!.add(listener);
    return () => listeners.get(topic)!.delete(listener);
  },
};

beforeAll(async () => {
  config = loadConfig({ ...isolatedEnv(), LOG_LEVEL: 'silent' });
  db = await openDatabase(config, { name: 'tts', entities: ttsSubgraph.entities, migrations: ttsSubgraph.migrations });
  setWakeTransport(bus);
}, 60_000);
afterAll(async () => {
  clearWakeTransport(bus);
  await Promise.all(queues.map((q) => q.stop()));
  await db?.destroy();
  await cleanupDatabases(config);
});

function queue(batch: (jobId: string) => Promise<boolean>): JobQueue {
  const q = new JobQueue({
    dataSource: db,
    pendingPerUser: 100,
    batchRows: 10,
    leaseSeconds: 2,
    intervalMs: 20,
    maxIntervalMs: 40,
    logger: undefined,
  }).register({ kind: 'test.wake', batch: (ctx) => batch(ctx.job.id) });
  queues.push(q);
  return q;
}

it('does not poll while idle, and is woken through the transport by a new job', async () => {
  const done: string[] = [];
  const q = queue(async (id) => {
    done.push(id);
    return false;
  });
  const claims = jest.spyOn(q, 'claimNext');
  q.start();
  await until(() => claims.mock.calls.length > 0, 'the first look');
  await new Promise((r) => setTimeout(r, 300)); // polling every 40 ms would look several times
  expect(claims.mock.calls.length).toBe(1);
  const job = await inTransaction(db, (m) => q.add(m, { kind: 'test.wake', ownerId: 'u1', counted: false }));
  await until(() => done.includes(job.id), 'the job done');
  expect(notified.some((t) => t.startsWith('jobs.'))).toBe(true);
  await q.stop();
});

it("retakes a dead runner's job when its lease ends, woken by nothing else", async () => {
  const done: string[] = [];
  let hung = 0;
  const dead = queue(() => {
    hung++;
    return new Promise<boolean>(() => undefined); // dies mid-batch: never commits, never renews
  });
  dead.start();
  const job = await inTransaction(db, (m) => dead.add(m, { kind: 'test.wake', ownerId: 'u2', counted: false }));
  await until(() => hung > 0, 'the job taken by the runner that dies');
  void dead.stop();
  queues.splice(queues.indexOf(dead), 1);
  // Another process's runner starts after that: nothing wakes it but the lease's end.
  const other = queue(async (id) => {
    done.push(id);
    return false;
  });
  for (const l of [...listeners.values()]) l.clear(); // the dead runner hears nothing more
  other.start();
  await until(() => done.includes(job.id), 'the job retaken after its lease', 10_000);
  // Done by the other runner: no longer held by the one that died (once the runner has committed
  // the batch the handler just returned from).
  await until(
    async () => ((await db.manager.findOneBy(KitJob, { id: job.id }))?.state ?? 'gone') !== 'running',
    'the retaken job finished',
    10_000,
  );
});
