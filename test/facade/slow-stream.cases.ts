// The facade's SSE bridge against a reader that stops reading: it is written to only as fast
// as it reads, and cut off after two heartbeat periods without taking anything. The GraphQL
// side is a stand-in subscription of large results, so that socket buffers fill at once;
// the event stream itself is tested with real databases in test/events.
import net from 'node:net';
import { loadConfig } from '../../lib/config';
import { listen } from '../../lib/http-server';
import { createLogger } from '../../lib/logger';
import { createFacadeApp } from '../../rest-facade/app';
import { facadeRoutes } from '../../subgraphs';
import type { GraphQLResult } from '../../rest-facade/graphql-client';
import { until } from '../helpers/wait';

it('cuts off a reader that stops reading, without piling results up', async () => {
  const config = loadConfig({ LOG_LEVEL: 'silent', EVENT_HEARTBEAT_SECONDS: '1' });
  let pulled = 0;
  let ended!: () => void;
  const subscriptionEnded = new Promise<void>((resolve) => (ended = resolve));
  async function* results(): AsyncGenerator<GraphQLResult> {
    try {
      for (let seq = 1; ; seq++) {
        pulled++;
        yield {
          data: {
            result: {
              seq: String(seq),
              type: 'test.big',
              id: 'r',
              occurred_at: new Date().toISOString(),
              event_id: 'e',
              user_id: 'u',
              data: { blob: 'x'.repeat(1 << 20) },
            },
          },
        };
      }
    } finally {
      ended();
    }
  }
  const app = createFacadeApp({
    config,
    routes: facadeRoutes,
    logger: createLogger(config),
    graphql: { execute: async () => ({}), checks: async () => ({}), subscribe: async () => results() },
  });
  const server = await listen(app, 0, '127.0.0.1');
  try {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n');
    socket.pause(); // and never read

    const started = Date.now();
    await subscriptionEnded;
    expect(Date.now() - started).toBeLessThan(6000);
    // Only what fits in the socket buffers was taken from the subscription.
    expect(pulled).toBeLessThan(64);
    // And the connection itself was ended, not left open: reading now drains what was buffered
    // and then sees the end (a stream left open would keep sending keep-alive comments).
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('data', () => {});
    socket.resume();
    await closed;
    socket.destroy();
  } finally {
    await server.close(1000);
  }
});

/**
 * The speech answers against readers that stop reading: a stand-in gateway hands out audio as
 * fast as it is asked for, so socket buffers fill at once and only the deadline can end it.
 */
describe('speech answers to a reader that stops reading', () => {
  const PIECE = Buffer.alloc(512 * 1024, 1);
  const WAV_HEAD = Buffer.alloc(44);
  WAV_HEAD.writeUInt32LE(24000, 24);
  const token = `x.${Buffer.from(JSON.stringify({ sub: 'u1' })).toString('base64url')}.y`;

  async function facade(onQuery: (query: string) => void) {
    const config = loadConfig({ LOG_LEVEL: 'silent', SPEECH_WRITE_TIMEOUT_SECONDS: '1' });
    const execute = async ({
      query,
      variables,
    }: {
      query: string;
      variables?: Record<string, unknown>;
    }): Promise<GraphQLResult> => {
      onQuery(query);
      const offset = Number(variables?.offset ?? 0);
      const piece = offset === 0 ? Buffer.concat([WAV_HEAD, PIECE]) : PIECE;
      if (query.includes('synthesizeSpeech')) return { data: { result: { id: 's1' } } };
      if (query.includes('cancelSynthesis')) return { data: { result: { outcome: 'canceled' } } };
      if (query.includes('synthesisStream'))
        return { data: { result: { state: 'RUNNING', error: null, chunk: piece.toString('base64'), end: false } } };
      if (query.includes('chunk('))
        return { data: { result: { chunk: piece.subarray(0, Number(variables?.length)).toString('base64') } } };
      return { data: { result: { content_type: 'audio/wav', bytes: 1024 ** 3, etag: '"a"' } } }; // the download's metadata: 1 GiB
    };
    const app = createFacadeApp({
      config,
      routes: facadeRoutes,
      logger: createLogger(config),
      graphql: { execute, checks: async () => ({}), subscribe: async () => ({}) },
    });
    return listen(app, 0, '127.0.0.1');
  }

  /** Sends the request, never reads, and resolves with the time until the server has dropped the connection. */
  async function stalledReader(server: Awaited<ReturnType<typeof facade>>, request: string): Promise<number> {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause(); // and never read
    socket.write(request);
    const started = Date.now();
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        server.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
      );
    while ((await connections()) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    return Date.now() - started;
  }

  it('cuts off POST /v1/audio/speech after SPEECH_WRITE_TIMEOUT_SECONDS and cancels its synthesis', async () => {
    const queries: string[] = [];
    const server = await facade((q) => queries.push(q));
    try {
      const body = JSON.stringify({ model: 'tts-1', input: 'Hello.', voice: 'f3' });
      const elapsed = await stalledReader(
        server,
        `POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      expect(elapsed).toBeLessThan(30_000); // the deadline is 1 s; without one, never
      // It stopped fetching audio once the reader stalled, and canceled the render.
      expect(queries.filter((q) => q.includes('synthesisStream')).length).toBeLessThan(64);
      // The cancel is sent as the connection closes: waited for, not assumed done with it.
      await until(() => queries.some((q) => q.includes('cancelSynthesis')), 'the synthesis canceled', 5000);
    } finally {
      await server.close(1000);
    }
  });

  it('cuts off the REST audio download after SPEECH_WRITE_TIMEOUT_SECONDS', async () => {
    const queries: string[] = [];
    const server = await facade((q) => queries.push(q));
    try {
      const elapsed = await stalledReader(
        server,
        `GET /api/v1/tts/syntheses/01900000-0000-7000-8000-000000000000/audio HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      );
      expect(elapsed).toBeLessThan(30_000); // the deadline is 1 s; without one, never
      expect(queries.filter((q) => q.includes('chunk(')).length).toBeLessThan(64);
    } finally {
      await server.close(1000);
    }
  });
});
