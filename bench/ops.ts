// Issue 13's figures. (1) Simultaneous first starts: 3 auth and 3 tts subgraph processes and
// 2 synthesis workers started at the same moment on fresh MySQL databases, BENCH_START_ROUNDS rounds
// (10): how many start. (2) A database outage under load on a MariaDB of its own
// (bench/outage.ts): how long from the database answering again to each process's first 2xx.
import { BENCH_DATABASE_PREFIX, benchEnv, MYSQL_URL, printTable, removeBenchData } from './harness';
import { privateMariadbMissing } from './mariadb';
import { runOutage } from './outage';
import { startProcess, ServiceProcess } from '../test/helpers/processes';

const ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 10);
const OUTAGE_SECONDS = Number(process.env.BENCH_OUTAGE_SECONDS ?? 5);

const LAYOUT: { name: string; script: string; args: string[]; env?: Record<string, string> }[] = [
  ...[1, 2, 3].map((i) => ({ name: `auth ${i}`, script: 'subgraph.js', args: ['auth'] })),
  ...[1, 2, 3].map((i) => ({
    name: `tts ${i}`,
    script: 'subgraph.js',
    args: ['tts'],
    env: { SYNTHESIS_CONCURRENCY: '0' },
  })),
  ...[1, 2].map((i) => ({ name: `worker ${i}`, script: 'worker.js', args: ['tts'] })),
];

async function simultaneousStarts() {
  const rows: Record<string, string | number>[] = [];
  let allStarted = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const env = benchEnv('mysql', {
      LOG_LEVEL: 'warn',
      DATABASE_URL: `${MYSQL_URL}/${BENCH_DATABASE_PREFIX}_ops_${process.pid}_${round}`,
    });
    const started = Date.now();
    const outcomes = await Promise.allSettled(
      LAYOUT.map((p) => startProcess(p.name, p.script, p.args, { ...env, ...p.env }, 180_000)),
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const up = outcomes
      .filter((o): o is PromiseFulfilledResult<ServiceProcess> => o.status === 'fulfilled')
      .map((o) => o.value);
    const failures = outcomes
      .filter((o): o is PromiseRejectedResult => o.status === 'rejected')
      .map((o) => String(o.reason?.message ?? o.reason).split('\n')[0]);
    await Promise.all(up.map((p) => p.kill()));
    await removeBenchData(env);
    if (up.length === LAYOUT.length) allStarted++;
    rows.push({
      round,
      started: `${up.length}/${LAYOUT.length}`,
      'all ready after s': seconds,
      failures: failures.join('; ') || '-',
    });
  }
  printTable(`Simultaneous first starts on fresh MySQL databases: 3 auth + 3 tts + 2 workers, ${ROUNDS} rounds`, rows);
  console.log(`\n${allStarted} of ${ROUNDS} rounds started every process.`);
}

async function outage() {
  const missing = privateMariadbMissing();
  if (missing) return console.log(`\nOutage: skipped, ${missing}.`);
  const r = await runOutage({ outageMs: OUTAGE_SECONDS * 1000 });
  const during = r.requests.filter((q) => q.phase === 'during');
  const byStatus = (list: typeof r.requests) =>
    Object.entries(list.reduce<Record<string, number>>((m, q) => ((m[q.status] = (m[q.status] ?? 0) + 1), m), {}))
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
  printTable(
    `Database outage: MariaDB stopped for ${OUTAGE_SECONDS} s under creates and session reads (facade → gateway → subgraphs)`,
    [
      {
        phase: 'before',
        requests: byStatus(r.requests.filter((q) => q.phase === 'before')),
        'max ms': Math.max(0, ...r.requests.filter((q) => q.phase === 'before').map((q) => q.ms)),
      },
      { phase: 'during', requests: byStatus(during), 'max ms': Math.max(0, ...during.map((q) => q.ms)) },
      {
        phase: 'after',
        requests: byStatus(r.requests.filter((q) => q.phase === 'after')),
        'max ms': Math.max(0, ...r.requests.filter((q) => q.phase === 'after').map((q) => q.ms)),
      },
    ],
  );
  printTable(
    'Recovery: from MariaDB answering again to the first 2xx (facade, gateway: a request; subgraphs, worker: readiness)',
    Object.entries(r.readyWhileDown).map(([name, statuses]) => ({
      process: name,
      'readiness while down': [...new Set(statuses)].join(', '),
      'first 2xx after ms': r.recoveryMs[name] ?? 'never',
    })),
  );
  console.log(
    `\nacknowledged voices ${r.acknowledged.length}, read back ${r.readBack}; events lost ${r.lostEvents}, duplicated ${r.duplicatedEvents}; outbox rows left ${r.outboxLeft}; stream resumed ${r.streamResumed}; exit codes ${JSON.stringify(r.exitCodes)}`,
  );
}

export async function run(): Promise<void> {
  await simultaneousStarts();
  await outage();
}
