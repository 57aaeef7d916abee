// Issue 41 finding 0: one anonymous request to a path no router took (`GET /healthcheck`) ended
// a gateway or subgraph process, from a response listener that threw. Every kind of process gets
// unknown paths, unusual methods and malformed requests, and each must keep serving.
// Run once, on SQLite (DATABASE_INCIDENTAL in jest.config.js): the processes open their databases,
// but no request here reaches one.
import net from 'node:net';
import { loadConfig } from '../../lib/config';
import { DistributedLayout, ServiceProcess, startDistributed } from '../helpers/processes';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';

const env = {
  ...isolatedEnv(),
  LOG_LEVEL: 'warn',
  SUBGRAPHS: 'auth',
  AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
  AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
};

let layout: DistributedLayout;

beforeAll(async () => {
  layout = await startDistributed(env, { gateways: 1, facades: 1 });
}, 120_000);
afterAll(async () => {
  await layout?.stop();
  await cleanupDatabases(loadConfig(env));
}, 60_000);

/** Raw bytes to a process: what an HTTP client would refuse to send. */
function raw(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => socket.end(bytes));
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => resolve(answer));
    socket.setTimeout(5000, () => socket.destroy());
  });
}

const unknown: [string, string][] = [
  ['GET', '/healthcheck'],
  ['GET', '/nope'],
  ['GET', '/'],
  ['POST', '/nope'],
  ['DELETE', '/graphql/graphql'],
  ['PROPFIND', '/'],
  ['GET', '/%E0%A4%A'],
  ['GET', '/health/live/extra'],
  ['OPTIONS', '/nope'],
];

const kinds = () => {
  const named = (list: ServiceProcess[], kind: string) => list.map((p) => [kind, p] as const);
  return [
    ...named(layout.subgraphs, 'subgraph'),
    ...named(layout.gateways, 'gateway'),
    ...named(layout.facades, 'facade'),
  ];
};

it('keeps every kind of process serving after unknown paths, methods and malformed requests', async () => {
  for (const [kind, proc] of kinds()) {
    for (const [method, path] of unknown) {
      const res = await fetch(`${proc.url}${path}`, { method }).catch((err: Error) => err);
      if (!(res instanceof Error)) {
        expect({ kind, method, path, status: res.status < 500 }).toEqual({ kind, method, path, status: true });
        await res.arrayBuffer();
      }
    }
    for (const bytes of [
      'GET /nope HTTP/1.1\r\nHost: x\r\n\r\n',
      'GARBAGE\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n',
      'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"a":',
    ])
      await raw(proc.url, bytes);
    // Each listener runs when its response closes: give them the turn, then ask again.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const live = await fetch(`${proc.url}/health/live`);
    expect({ kind, status: live.status }).toEqual({ kind, status: 200 });
  }
  const exits = await Promise.race([
    Promise.all(layout.all.map((p) => p.exited)),
    new Promise((resolve) => setTimeout(() => resolve('running'), 100)),
  ]);
  expect(exits).toBe('running');
}, 60_000);
