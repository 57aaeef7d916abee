// What the one-process server (`npm start`) costs with no traffic at all: its pollers, timers and
// heartbeats. Starts the built dist/bin/all-in-one.js on a fresh DATA_DIR (SQLite, or BENCH_DB=mysql),
// lets it settle, then reads its CPU from /proc for BENCH_IDLE_SECONDS (default 20). With
// BENCH_BASE=<another checkout's dist/bench> that build's server idles beside it, measured over the
// same seconds (before/after of a change in one run). Issue 28's target: at most 5 ms per second.
// BENCH_EVENT_LOG_URL=nats://127.0.0.1:4222 runs the servers with the event log on JetStream.
import fs from 'node:fs';
import path from 'node:path';
import { benchEnv, cpuMs, printTable, removeBenchData } from './harness';
import { ServiceProcess, startProcess } from '../test/helpers/processes';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 20);
const SETTLE_SECONDS = Number(process.env.BENCH_IDLE_SETTLE_SECONDS ?? 10);
const BIN = path.join(__dirname, '../bin');

const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

export async function run(): Promise<void> {
  const db = (process.env.BENCH_DB ?? 'sqlite') as 'sqlite' | 'mysql';
  const builds = [{ name: 'this build', script: 'all-in-one.js' }];
  if (process.env.BENCH_BASE)
    builds.unshift({
      name: 'base',
      script: path.relative(BIN, path.join(path.resolve(process.env.BENCH_BASE), '../bin/all-in-one.js')),
    });
  const servers: { name: string; proc: ServiceProcess; env: Record<string, string> }[] = [];
  try {
    for (const b of builds) {
      // As `npm start` runs it (package.json), with no bootstrap user: nothing but the server itself.
      const env = benchEnv(db, {
        LOG_LEVEL: 'warn',
        AUTH_BOOTSTRAP_USERNAME: '',
        AUTH_BOOTSTRAP_PASSWORD: '',
        // BENCH_EVENT_LOG_URL=nats://…: the event log on JetStream (its wake-ups replace the polls).
        ...(process.env.BENCH_EVENT_LOG_URL ? { EVENT_LOG_URL: process.env.BENCH_EVENT_LOG_URL } : {}),
      });
      servers.push({
        name: b.name,
        env,
        proc: await startProcess(b.name, b.script, [], env, 60_000, ['--max-semi-space-size=8']),
      });
    }
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
    const before = servers.map((s) => cpuMs(s.proc.pid));
    const started = Date.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const elapsed = (Date.now() - started) / 1000;
    printTable(
      `Idle one-process server (${db}): CPU over ${SECONDS} s with no request, after ${SETTLE_SECONDS} s to settle`,
      servers.map((s, i) => ({
        build: s.name,
        'CPU (ms per s)': ((cpuMs(s.proc.pid) - before[i]) / elapsed).toFixed(1),
        'RSS (MiB)': rssMiB(s.proc.pid).toFixed(1),
      })),
    );
  } finally {
    for (const s of servers) {
      await s.proc.kill();
      await removeBenchData(s.env);
    }
  }
}
