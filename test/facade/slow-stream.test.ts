// The facade's SSE bridge against a reader that stops reading: it is written to only as fast
// as it reads, and cut off after two heartbeat periods without taking anything. The GraphQL
// side is a stand-in subscription of large results, so that socket buffers fill at once;
// the event stream itself is tested with real databases in test/events.
import net from 'node:net';
import { loadConfig } from '../../lib/config';
import { listen } from '../../lib/http-server';
import { createLogger } from '../../lib/logger';
import { createFacadeApp } from '../../rest-facade/app';
import type { GraphQLResult } from '../../rest-facade/graphql-client';

it('cuts off a reader that stops reading, without piling results up', async () => {
  const config = loadConfig({ LOG_LEVEL: 'silent', EVENT_HEARTBEAT_SECONDS: '1' });
  let pulled = 0;
  let ended!: () => void;
  const subscriptionEnded = new Promise<void>((resolve) => (ended = resolve));
  async function* results(): AsyncGenerator<GraphQLResult> {
    try {
      for (let seq = 1; ; seq++) {
        pulled++;
        yield { data: { result: { seq: String(seq), type: 'test.big', id: 'r', occurred_at: new Date().toISOString(), event_id: 'e', user_id: 'u', data: { blob: 'x'.repeat(1 << 20) } } } };
      }
    } finally {
      ended();
    }
  }
  const app = createFacadeApp({
    config,
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
