// Child processes of the built entry points (dist/bin), for benchmarks and end-to-end tests:
// each on a free port, ready when its /health/live answers, its JSON log lines kept.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** The project root, from the source (test/helpers/) or the build (dist/test/helpers/): the folder with tsconfig.json. */
function projectRoot(dir = __dirname): string {
  return fs.existsSync(path.join(dir, 'tsconfig.json')) ? dir : projectRoot(path.dirname(dir));
}

const BIN = path.join(projectRoot(), 'dist/bin');

export interface ServiceProcess {
  name: string;
  url: string;
  pid: number;
  /** Every JSON log line so far. */
  logs: Record<string, any>[];
  /** Resolves with the exit code (null when ended by a signal) once the process has exited. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startProcess(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
  nodeArgs: string[] = [],
): Promise<ServiceProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...profile, path.join(BIN, script), ...args], {
    // As deployed: jest's NODE_ENV=test changes how some libraries behave (Apollo's signal handling).
    env: { ...process.env, NODE_ENV: 'production', HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, any>[] = [];
  let stderr = '';
  let buffered = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        logs.push(JSON.parse(line));
      } catch {
        /* not a log line */
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${name} exited with ${child.exitCode} before it was ready: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not ready in ${timeoutMs} ms: ${stderr}`);
    }
    const live = await fetch(`${url}/health/live`).then(
      (r) => r.ok,
      () => false,
    );
    if (live) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    url,
    pid: child.pid!,
    logs,
    exited,
    /** Sends `signal`; a process still running 20 s later is killed outright, so none is left behind. */
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(force);
    },
  };
}

export interface DistributedLayout {
  subgraphs: ServiceProcess[];
  workers: ServiceProcess[];
  gateways: ServiceProcess[];
  facades: ServiceProcess[];
  all: ServiceProcess[];
  stop(): Promise<void>;
}

/**
 * The distributed layout as processes: the supergraph composed ahead of time (`npm run
 * compose`), each subgraph its own process, then `gateways` gateways and `facades` facades;
 * each facade spreads its requests over every gateway, starting its turn at a different one.
 * With `workers`, speech is rendered by that many `start:worker` processes instead of the tts
 * subgraph's own.
 */
export async function startDistributed(
  given: Record<string, string>,
  counts: {
    gateways: number;
    facades: number;
    workers?: number;
    /** Processes of each subgraph: gateway i routes to the replicas numbered i (mod replicas). */
    replicas?: number;
    /** Each process its own DATA_DIR (under the given one), as on hosts that share no disk. */
    ownDataDirs?: boolean;
    /** Facade i sends to gateway i only (instead of every gateway in turn). */
    pinned?: boolean;
  } = { gateways: 1, facades: 1 },
): Promise<DistributedLayout> {
  // The processes' shared hop secret, as a deployment sets it: the client address crosses hops only with it.
  const env: Record<string, string> = { SUBGRAPH_SECRET: crypto.randomBytes(24).toString('hex'), ...given };
  const supergraph = path.join(env.DATA_DIR, 'supergraph.graphql');
  const composed = spawnSync(process.execPath, [path.join(BIN, 'compose.js')], {
    env: { ...process.env, ...env, SUPERGRAPH_PATH: supergraph },
    encoding: 'utf8',
  });
  if (composed.status !== 0) throw new Error(composed.stderr);
  const names = /The subgraphs (.+?) compose/.exec(composed.stdout)![1].split(', ');
  const all: ServiceProcess[] = [];
  const stop = () => Promise.all(all.map((p) => p.kill())).then(() => undefined);
  // A folder of its own per process (ownDataDirs), else the shared one.
  const own = (label: string): Record<string, string> => {
    if (!counts.ownDataDirs) return {};
    const dir = path.join(env.DATA_DIR, label.replace(/\W+/g, '-'));
    fs.mkdirSync(dir, { recursive: true });
    return { DATA_DIR: dir };
  };
  const replicas = counts.replicas ?? 1;
  try {
    const subgraphs: ServiceProcess[] = [];
    const rendering: Record<string, string> = counts.workers ? { SYNTHESIS_CONCURRENCY: '0' } : {};
    for (let r = 0; r < replicas; r++)
      for (const name of names) {
        const label = replicas > 1 ? `subgraph ${name} ${r + 1}` : `subgraph ${name}`;
        subgraphs.push(await startProcess(label, 'subgraph.js', [name], { ...env, ...rendering, ...own(label) }));
      }
    all.push(...subgraphs);
    const workers = await Promise.all(
      Array.from({ length: counts.workers ?? 0 }, (_, i) =>
        startProcess(`worker ${i + 1}`, 'worker.js', [], { ...env, ...own(`worker ${i + 1}`) }),
      ),
    );
    all.push(...workers);
    const subgraphUrls = (r: number) =>
      names.map((name, i) => `${name}=${subgraphs[r * names.length + i].url}/graphql`).join(',');
    const gateways = await Promise.all(
      Array.from({ length: counts.gateways }, (_, i) =>
        startProcess(`gateway ${i + 1}`, 'gateway.js', [], {
          ...env,
          ...own(`gateway ${i + 1}`),
          SUBGRAPH_URLS: subgraphUrls(i % replicas),
          SUPERGRAPH_PATH: supergraph,
        }),
      ),
    );
    all.push(...gateways);
    const inTurnFrom = (i: number) =>
      counts.pinned
        ? gateways[i % gateways.length].url
        : gateways.map((_, j) => gateways[(i + j) % gateways.length].url).join(',');
    const facades = await Promise.all(
      Array.from({ length: counts.facades }, (_, i) =>
        startProcess(`facade ${i + 1}`, 'facade.js', [], {
          ...env,
          ...own(`facade ${i + 1}`),
          GATEWAY_URL: inTurnFrom(i),
        }),
      ),
    );
    all.push(...facades);
    return { subgraphs, workers, gateways, facades, all, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
