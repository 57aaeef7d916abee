// A peer Federation 2 gateway over the same subgraph processes: Hive Gateway (one of the bench
// tools, bench/package.json), for the `gateways` benchmark and the test that any Federation 2 gateway serves
// the supergraph. Run as `node dist/bench/hive-gateway.js` with SUPERGRAPH_PATH,
// SUBGRAPH_URLS (as the project's gateway reads them), PORT and HOST.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HOP_SECRET_HEADER } from '../lib/request-context';
import { benchRequire } from './tools';

// Loaded untyped, from bench/node_modules: its typings widen graphql's error extensions for the
// whole build (Yoga's `http.headers` as a plain record), which would clash with Apollo's HeaderMap in gateway/.
const { createGatewayRuntime } = benchRequire('@graphql-hive/gateway') as {
  createGatewayRuntime: (
    options: Record<string, unknown>,
  ) => ((req: http.IncomingMessage, res: http.ServerResponse) => void) & { dispose(): Promise<void> | void };
};

/** The supergraph with each subgraph's URL replaced by its address in `urls` (by name). */
export function supergraphFor(sdl: string, urls: Record<string, string>): string {
  return sdl.replace(/@join__graph\(name: "([^"]+)", url: "[^"]*"\)/g, (whole, name: string) =>
    urls[name] ? `@join__graph(name: "${name}", url: "${urls[name]}")` : whole,
  );
}

/** Headers passed on to every subgraph: the caller's token, request id and address. */
const PROPAGATED = ['authorization', 'x-request-id', 'x-forwarded-for'];

/**
 * `hopSecret`: the project's subgraphs in production answer only the holders of SUBGRAPH_SECRET
 * (lib/hop.ts), so Hive Gateway sends it too, as the project's gateway does.
 */
export function hiveGatewayHandler(supergraph: string, hopSecret = process.env.SUBGRAPH_SECRET) {
  return createGatewayRuntime({
    supergraph,
    logging: false,
    // Off, so that both gateways send every request to the subgraphs (Apollo's does not dedupe).
    transportEntries: { '*.http': { options: { deduplicateInflightRequests: false } as Record<string, unknown> } },
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }: { request: Request }) => ({
        ...Object.fromEntries(PROPAGATED.map((h) => [h, request.headers.get(h)])),
        ...(hopSecret ? { [HOP_SECRET_HEADER]: hopSecret } : {}),
      }),
    },
  });
}

if (require.main === module) {
  delete process.env.LOG_LEVEL; // ours says `silent`; Hive's logger reads the same variable and refuses that word
  const urls = Object.fromEntries(
    (process.env.SUBGRAPH_URLS ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => pair.split('=', 2) as [string, string]),
  );
  const gateway = hiveGatewayHandler(supergraphFor(fs.readFileSync(process.env.SUPERGRAPH_PATH!, 'utf8'), urls));
  const server = http.createServer((req, res) => {
    // The liveness path the project's process helpers wait for.
    if (req.url === '/health/live')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    gateway(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ msg: 'hive gateway ready', port })}\n`);
  });
  const stop = () => server.close(() => void Promise.resolve(gateway.dispose()).finally(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  server.on('close', () => undefined);
}
