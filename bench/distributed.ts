// Issue 5's and 14's figures: the same requests through the distributed layout (1 facade, 1
// gateway, each subgraph its own process, all over HTTP) and through the one-process server, on
// MySQL, runs alternating (BENCH_ROUNDS, medians). Per hop, the CPU each process spends per
// request: the distributed layout does the one-process work plus an HTTP hop (a request written
// and parsed on both sides) per arrow, so on a 2-core machine the sum of the hops' CPU, not the
// layout, caps it. Issue 14's target: distributed ≥ 0.4× one process.
import type autocannon from 'autocannon';
import { benchEnv, cpuMs, load, LoadResult, median, postJson, printTable, removeBenchData, startBenchServer } from './harness';
import { startDistributed } from './processes';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Proc {
  name: string;
  pid: number;
}

export async function run(): Promise<void> {
  const oneProcess = await startBenchServer(benchEnv('mysql'));
  const distributedEnv = benchEnv('mysql');
  const distributed = await startDistributed(distributedEnv);
  try {
    const layouts = [
      { layout: 'one process', url: oneProcess.url, procs: [{ name: 'one process', pid: oneProcess.pid }] as Proc[] },
      { layout: 'distributed', url: distributed.facades[0].url, procs: [...distributed.facades, ...distributed.gateways, ...distributed.subgraphs].map((p) => ({ name: p.name, pid: p.pid })) },
    ];
    const workloads = [
      { name: 'GET /api/v1/auth/session', opts: (url: string, headers: Record<string, string>) => ({ url: `${url}/api/v1/auth/session`, headers }) },
      {
        name: 'POST /api/v1/tts/voices',
        opts: (url: string, headers: Record<string, string>) => {
          let n = 0;
          const requests: autocannon.Request[] = [{ method: 'POST', path: '/api/v1/tts/voices', setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `bench ${process.hrtime.bigint()} ${n++}`, base_voice: 'f3' }) }) }];
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
    const results = workloads.map(() => layouts.map(() => ({ runs: [] as LoadResult[], cpu: new Map<string, number[]>() })));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [wi, w] of workloads.entries()) {
        for (const [li, l] of layouts.entries()) {
          const before = l.procs.map((p) => cpuMs(p.pid));
          const result = await load(`${w.name}, ${l.layout}`, { ...w.opts(l.url, tokens.get(l.layout)!), duration: DURATION });
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
    printTable(`One process vs distributed, 50 connections, ${ROUNDS} × ${DURATION} s alternating, MySQL`, workloads.flatMap((w, wi) => layouts.map((l, li) => {
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
    })));
    printTable('Per hop: CPU ms per request of each process (medians)', workloads.flatMap((w, wi) => layouts.flatMap((l, li) =>
      [...results[wi][li].cpu].map(([name, values]) => ({ route: w.name, layout: l.layout, process: name, 'CPU ms/request': median(values).toFixed(3) })))));
    const cores = 2;
    for (const [wi, w] of workloads.entries()) {
      const [one, dist] = results[wi];
      const ratio = median(dist.runs.map((x) => x.rps)) / median(one.runs.map((x) => x.rps));
      const cpuSum = (r: typeof one) => [...r.cpu.values()].reduce((sum, v) => sum + median(v), 0);
      console.log(`\n${w.name}: ratio distributed / one process ${ratio.toFixed(2)} (median requests/s; target ≥ 0.4). ` +
        `CPU per request ${cpuSum(dist).toFixed(3)} ms over all hops vs ${cpuSum(one).toFixed(3)} ms in one process: ` +
        `at most ${Math.round((cores * 1000) / cpuSum(dist))} vs ${Math.round((cores * 1000) / cpuSum(one))} req/s on ${cores} cores`);
    }
  } finally {
    await oneProcess.stop();
    await distributed.stop();
    await removeBenchData(distributedEnv);
  }
}
