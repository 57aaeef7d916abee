// A local webhook receiver for the tests: records every request and answers as each path is told
// (a status, a delay, no answer at all, a redirect, a large body).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status?: number;
  delayMs?: number;
  /** Never answers (until the receiver closes). */
  hang?: boolean;
  location?: string;
  bodyBytes?: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** How `path` answers its n-th request (1-based); 204 by default. */
  answer(path: string, how: (n: number) => Answer): void;
  at(path: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers = new Map<string, (n: number) => Answer>();
  const counts = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      const how = answers.get(path)?.(n) ?? {};
      if (how.hang) {
        hanging.add(res);
        return;
      }
      setTimeout(() => {
        if (how.location) res.setHeader('location', how.location);
        res.writeHead(how.status ?? 204);
        res.end(how.bodyBytes ? Buffer.alloc(how.bodyBytes, 'x') : undefined);
      }, how.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer: (path, how) => answers.set(path, how),
    at: (path) => received.filter((r) => r.path === path),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
