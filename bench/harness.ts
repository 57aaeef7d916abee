// Shared pieces of the benchmarks: a server in a child process (so the load generator does
// not share its event loop), autocannon runs, and a table printer.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import { loadConfig } from '../lib/config';
import { dropPrefixedDatabases } from '../lib/database/mysql-admin';
import { mysqlTestServer } from '../test/helpers/mysql-test-url';
import { benchRequire } from './tools';

export interface BenchServer {
  url: string;
  pid: number;
  /** Milliseconds from spawning the process to the server answering. */
  startMs: number;
  env: Record<string, string>;
  rssMiB(): number;
  stop(): Promise<void>;
}

const mysqlBench = mysqlTestServer('bench');
/** The MySQL server of the benchmarks (MYSQL_TEST_URL without its path). */
export const MYSQL_URL = mysqlBench.server;
/** What every benchmark database's name starts with: MYSQL_TEST_URL's path, or `bench`. */
export const BENCH_DATABASE_PREFIX = mysqlBench.prefix;

/** Environment for a fresh server on `db` with its own data folder / database prefix. */
export function benchEnv(db: 'sqlite' | 'mysql', extra: Record<string, string> = {}): Record<string, string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fav-bench-'));
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    DATABASE_URL:
      db === 'mysql' ? `${MYSQL_URL}/${BENCH_DATABASE_PREFIX}_${process.pid}_${Date.now() % 100000}` : 'sqlite',
    AUTH_BOOTSTRAP_USERNAME: 'bench',
    AUTH_BOOTSTRAP_PASSWORD: 'bench password',
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '1000000',
    ...extra,
  };
}

/** BENCH_CPU_PROF=<folder>: every server process writes a V8 CPU profile there when it exits. */
export const profileArgs = () =>
  process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];

/** Removes what a benchmark's server made: its MySQL databases and its data folder. */
export async function removeBenchData(env: Record<string, string>): Promise<void> {
  const config = loadConfig(env);
  await dropPrefixedDatabases(config);
  fs.rmSync(config.dataDir, { recursive: true, force: true });
}

/**
 * A bench server process (default: the one-process server with the baselines) that prints
 * "READY <url>". `ownsData: false` leaves the databases and data folder to whoever made them.
 */
export async function startBenchServer(
  env: Record<string, string>,
  { script = 'server.js', ownsData = true } = {},
): Promise<BenchServer> {
  const started = process.hrtime.bigint();
  const child: ChildProcess = spawn(process.execPath, [...profileArgs(), path.join(__dirname, script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  const startMs = Number(process.hrtime.bigint() - started) / 1e6;
  return {
    url,
    pid: child.pid!,
    startMs,
    env,
    rssMiB: () => {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
    },
    /** Stops the server, then removes its databases and data folder. */
    async stop() {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      if (ownsData) await removeBenchData(env);
    },
  };
}

/** CPU time (user + system) a process has used so far, in milliseconds. */
export function cpuMs(pid: number): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in clock ticks.
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

/** CPU time (user + system) of a process's main thread, the event loop's, in ms (Linux): cpuMs less the worker threads'. */
export function mainThreadCpuMs(pid: number): number {
  const fields = fs
    .readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/**
 * The bench server's event-loop delay since the previous call (bench/server.ts `/bench/loop`, a
 * perf_hooks histogram): its max is the longest the loop was held. NaN from a build without it.
 */
export async function loopDelay(server: { url: string }): Promise<{ max: number; p99: number }> {
  const res = await fetch(`${server.url}/bench/loop`).catch(() => undefined);
  if (!res || res.status !== 200) return { max: NaN, p99: NaN };
  const body = (await res.json()) as { max_ms: number; p99_ms: number };
  return { max: Math.round(body.max_ms * 10) / 10, p99: Math.round(body.p99_ms * 10) / 10 };
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

export async function load(
  name: string,
  opts: {
    url: string;
    method?: 'GET' | 'POST' | 'DELETE';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    /** A fixed number of requests instead of a duration. */
    amount?: number;
    requests?: autocannon.Request[];
  },
): Promise<LoadResult> {
  const run = benchRequire('autocannon') as typeof autocannon;
  const result = await run({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? 50,
    duration: opts.duration ?? 10,
    amount: opts.amount,
    requests: opts.requests,
  });
  return {
    name,
    // With `amount`, a run may end inside its first second: count over the elapsed time.
    rps: Math.round(opts.amount ? result.requests.total / (result.duration || 1) : result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export function printTable(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n### ${title}\n`);
  if (!rows.length) return;
  const keys = Object.keys(rows[0]);
  console.log(`| ${keys.join(' | ')} |`);
  console.log(`| ${keys.map(() => '---').join(' | ')} |`);
  for (const row of rows) console.log(`| ${keys.map((k) => row[k]).join(' | ')} |`);
}

export async function postJson(
  url: string,
  body: unknown,
  token?: string,
): Promise<{ status: number; body: any; location: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null), location: res.headers.get('location') };
}
