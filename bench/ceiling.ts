// Issue 14's ceiling: GET /api/v1/auth/session of the one-process server beside the cheapest
// correct implementation of it (bench/ceiling-server.ts: node:http, one signature check, one
// primary-key read with mysql2), both on MySQL, same token and row. Runs alternate A/B/A/B so
// that a busy machine slows both alike; medians and their ratio are reported, with the CPU
// each process spends per request.
import fs from 'node:fs';
import path from 'node:path';
import {
  benchEnv,
  cpuMs,
  load,
  LoadResult,
  median,
  postJson,
  printTable,
  removeBenchData,
  startBenchServer,
} from './harness';
import { startProcess } from '../test/helpers/processes';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

export async function run(): Promise<void> {
  const env = benchEnv('mysql');
  const project = await startBenchServer(env);
  const ceiling = await startBenchServer(env, { script: 'ceiling-server.js', ownsData: false });
  try {
    await new Promise((r) => setTimeout(r, 2000));
    const idleRss = project.rssMiB();
    const login = await postJson(`${project.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
    const headers = { authorization: `Bearer ${login.body.access_token}` };
    const sides = [
      {
        name: 'project (npm start: facade → gateway → auth subgraph)',
        server: project,
        runs: [] as LoadResult[],
        cpu: [] as number[],
      },
      {
        name: 'ceiling (node:http + jsonwebtoken + mysql2)',
        server: ceiling,
        runs: [] as LoadResult[],
        cpu: [] as number[],
      },
    ];
    for (const side of sides) {
      const res = await fetch(`${side.server.url}/api/v1/auth/session`, { headers });
      if (res.status !== 200) throw new Error(`${side.name} answered ${res.status}: ${await res.text()}`);
      await load('warm-up', { url: `${side.server.url}/api/v1/auth/session`, headers, duration: 2 });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        const before = cpuMs(side.server.pid);
        const result = await load(side.name, {
          url: `${side.server.url}/api/v1/auth/session`,
          headers,
          duration: DURATION,
        });
        side.cpu.push((cpuMs(side.server.pid) - before) / Math.max(1, result.requests));
        side.runs.push(result);
      }
    }
    printTable(
      `GET /api/v1/auth/session, 50 connections, ${ROUNDS} × ${DURATION} s alternating, MySQL`,
      sides.map((s) => ({
        server: s.name,
        'req/s per run': s.runs.map((r) => r.rps).join(', '),
        'median req/s': median(s.runs.map((r) => r.rps)),
        'median p50 ms': median(s.runs.map((r) => r.p50)),
        'median p99 ms': median(s.runs.map((r) => r.p99)),
        'server CPU ms/request': median(s.cpu).toFixed(3),
        'non-2xx': s.runs.reduce((n, r) => n + r.non2xx, 0),
      })),
    );
    const ratio = median(sides[0].runs.map((r) => r.rps)) / median(sides[1].runs.map((r) => r.rps));
    console.log(`\nratio project / ceiling (median requests/s): ${ratio.toFixed(2)}   (target ≥ 0.5)`);
    // On a shared, busy machine requests/s swing with the neighbours' load; CPU per request less so.
    console.log(
      `ratio ceiling / project (median server CPU per request): ${(median(sides[1].cpu) / median(sides[0].cpu)).toFixed(2)}`,
    );
    printTable('Bench server (npm start plus the baseline routes)', [
      { 'idle RSS (MiB)': idleRss.toFixed(1), 'RSS after load (MiB)': project.rssMiB().toFixed(1) },
    ]);
  } finally {
    await ceiling.stop();
    await project.stop();
  }
  await idleRssOfNpmStart();
}

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/**
 * `npm start` as deployed (its script's node options, NODE_ENV=production), idle: its resident
 * memory. Started twice on the same data, measured the second time: the first start creates the
 * bootstrap user, whose password check loads the strength estimator's dictionaries.
 */
async function idleRssOfNpmStart(): Promise<void> {
  const start = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')).scripts.start as string;
  const nodeArgs =
    /node ((?:--\S+ )*)dist\/bin\/all-in-one\.js/.exec(start)?.[1].trim().split(/\s+/).filter(Boolean) ?? [];
  const rows = [];
  for (const db of ['sqlite', 'mysql'] as const) {
    const env = benchEnv(db);
    try {
      await (await startProcess(`npm start (${db})`, 'all-in-one.js', [], env, 60_000, nodeArgs)).kill();
      const server = await startProcess(`npm start (${db})`, 'all-in-one.js', [], env, 60_000, nodeArgs);
      try {
        await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
        rows.push({
          server: `${server.name}, node ${nodeArgs.join(' ')}`,
          [`idle RSS ${IDLE_SECONDS} s after start (MiB)`]: rssMiB(server.pid).toFixed(1),
          target: '< 150',
        });
      } finally {
        await server.kill();
      }
    } finally {
      await removeBenchData(env);
    }
  }
  printTable('One-process server, idle', rows);
}
