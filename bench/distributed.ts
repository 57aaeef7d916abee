// Issue 5's and 14's figures: the same requests through the distributed layout (1 facade, 1
// gateway, each subgraph its own process, all over HTTP) and through the one-process server, on
// MySQL, runs alternating (BENCH_ROUNDS, medians). Per hop, the CPU each process spends per
// request: the distributed layout does the one-process work plus an HTTP hop (a request written
// and parsed on both sides) per arrow, so on a 2-core machine the sum of the hops' CPU, not the
// layout, caps it. Issue 14's target: distributed ≥ 0.4× one process. With BENCH_BASE=<another
// checkout's dist/bench> that build's two layouts run too, all four alternating (before/after of a
// change in one run, on a machine whose speed drifts between runs).
import fs from 'node:fs';
import path from 'node:path';
import type autocannon from 'autocannon';
import {
  BenchServer,
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
import type * as Processes from '../test/helpers/processes';

/** Where a build's process helpers are: test/helpers since they moved, bench/ in older builds. */
export const processesModule = (bench: string) =>
  fs.existsSync(path.join(bench, 'processes.js'))
    ? path.join(bench, 'processes')
    : path.join(bench, '../test/helpers/processes');

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Proc {
  name: string;
  pid: number;
}

export async function run(): Promise<void> {
  const builds = [{ tag: '', bench: __dirname }];
  if (process.env.BENCH_BASE) builds.unshift({ tag: ' (base)', bench: path.resolve(process.env.BENCH_BASE) });
  const started: {
    oneProcess: BenchServer;
    distributed: Awaited<ReturnType<typeof Processes.startDistributed>>;
    env: Record<string, string>;
  }[] = [];
  try {
    for (const b of builds) {
      const { startDistributed } = (await import(processesModule(b.bench))) as typeof Processes;
      const oneProcess = await startBenchServer(benchEnv('mysql'), {
        script: path.relative(__dirname, path.join(b.bench, 'server.js')),
      });
      const env = benchEnv('mysql');
      started.push({ oneProcess, distributed: await startDistributed(env), env });
    }
    // Pairs: each build's one process, then its distributed layout.
    const layouts = builds.flatMap((b, i) => {
      const { oneProcess, distributed } = started[i];
      return [
        {
          layout: `one process${b.tag}`,
          url: oneProcess.url,
          procs: [{ name: 'one process', pid: oneProcess.pid }] as Proc[],
        },
        {
          layout: `distributed${b.tag}`,
          url: distributed.facades[0].url,
          procs: [...distributed.facades, ...distributed.gateways, ...distributed.subgraphs].map((p) => ({
            name: p.name,
            pid: p.pid,
          })),
        },
      ];
    });
    const workloads = [
      {
        name: 'GET /api/v1/auth/session',
        opts: (url: string, headers: Record<string, string>) => ({ url: `${url}/api/v1/auth/session`, headers }),
      },
      {
        name: 'POST /api/v1/tts/voices',
        opts: (url: string, headers: Record<string, string>) => {
          let n = 0;
          const requests: autocannon.Request[] = [
            {
              method: 'POST',
              path: '/api/v1/tts/voices',
              setupRequest: (req) => ({
                ...req,
                body: JSON.stringify({ name: `bench ${process.hrtime.bigint()} ${n++}`, base_voice: 'f3' }),
              }),
            },
          ];
          return { url, headers, requests };
        },
      },
    ];
    const tokens = new Map<string, Record<string, string>>();
    for (const l of layouts) {
      const login = await postJson(`${l.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
      const headers = { authorization: `Bearer ${login.body.access_token}`, 'content-type': 'application/json' };
      tokens.set(l.layout, headers);
      for (const w of workloads) await load('warm-up', { ...w.opts(l.url, headers), duration: 2 });
    }
    // results[workload][layout]: runs, and per process the CPU per request of each run.
    const results = workloads.map(() =>
      layouts.map(() => ({ runs: [] as LoadResult[], cpu: new Map<string, number[]>() })),
    );
    for (let round = 0; round < ROUNDS; round++) {
      for (const [wi, w] of workloads.entries()) {
        for (const [li, l] of layouts.entries()) {
          const before = l.procs.map((p) => cpuMs(p.pid));
          const result = await load(`${w.name}, ${l.layout}`, {
            ...w.opts(l.url, tokens.get(l.layout)!),
            duration: DURATION,
          });
          const r = results[wi][li];
          r.runs.push(result);
          l.procs.forEach((p, i) => {
            const list = r.cpu.get(p.name) ?? [];
            list.push((cpuMs(p.pid) - before[i]) / Math.max(1, result.requests));
            r.cpu.set(p.name, list);
          });
        }
      }
    }
    printTable(
      `One process vs distributed, 50 connections, ${ROUNDS} × ${DURATION} s alternating, MySQL`,
      workloads.flatMap((w, wi) =>
        layouts.map((l, li) => {
          const r = results[wi][li];
          return {
            route: `${w.name}, ${l.layout}`,
            'req/s per run': r.runs.map((x) => x.rps).join(', '),
            'median req/s': median(r.runs.map((x) => x.rps)),
            'median p50 ms': median(r.runs.map((x) => x.p50)),
            'median p99 ms': median(r.runs.map((x) => x.p99)),
            'CPU ms/request, all processes': [...r.cpu.values()].reduce((sum, v) => sum + median(v), 0).toFixed(3),
            'non-2xx': r.runs.reduce((k, x) => k + x.non2xx, 0),
          };
        }),
      ),
    );
    printTable(
      'Per hop: CPU ms per request of each process (medians)',
      workloads.flatMap((w, wi) =>
        layouts.flatMap((l, li) =>
          [...results[wi][li].cpu].map(([name, values]) => ({
            route: w.name,
            layout: l.layout,
            process: name,
            'CPU ms/request': median(values).toFixed(3),
          })),
        ),
      ),
    );
    const cores = 2;
    const cpuSum = (r: (typeof results)[number][number]) => [...r.cpu.values()].reduce((sum, v) => sum + median(v), 0);
    for (const [wi, w] of workloads.entries()) {
      for (const [bi, b] of builds.entries()) {
        const [one, dist] = results[wi].slice(2 * bi, 2 * bi + 2);
        const ratio = median(dist.runs.map((x) => x.rps)) / median(one.runs.map((x) => x.rps));
        console.log(
          `\n${w.name}${b.tag}: ratio distributed / one process ${ratio.toFixed(2)} (median requests/s; target ≥ 0.4). ` +
            `CPU per request ${cpuSum(dist).toFixed(3)} ms over all hops vs ${cpuSum(one).toFixed(3)} ms in one process: ` +
            `at most ${Math.round((cores * 1000) / cpuSum(dist))} vs ${Math.round((cores * 1000) / cpuSum(one))} req/s on ${cores} cores`,
        );
      }
      if (builds.length === 2) {
        const [, baseDist, , dist] = results[wi];
        console.log(
          `${w.name}: distributed, this build / base: CPU over all hops ${(cpuSum(dist) / cpuSum(baseDist)).toFixed(2)}, ` +
            `requests/s ${(median(dist.runs.map((x) => x.rps)) / median(baseDist.runs.map((x) => x.rps))).toFixed(2)}`,
        );
      }
    }
  } finally {
    for (const s of started) {
      await s.oneProcess.stop();
      await s.distributed.stop();
      await removeBenchData(s.env);
    }
  }
}
