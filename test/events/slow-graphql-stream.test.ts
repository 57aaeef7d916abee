// /graphql/stream against a reader that stops reading: graphql-sse would pull results as fast
// as they come and queue what the socket has not taken; the events service pulls only as fast
// as the socket takes frames and cuts the reader off after two heartbeat periods, like the REST
// bridge (test/facade/slow-stream.cases.ts). The event stream is a stand-in of large events, so
// that socket buffers fill at once; the real one is tested with databases in stream.test.ts.
import crypto from 'node:crypto';
import net from 'node:net';
import express from 'express';
import { createEventsService } from '../../gateway/events';
import { loadConfig } from '../../lib/config';
import type { EventLog } from '../../lib/event-log';
import type { EventStream, StreamEvent } from '../../lib/event-stream';
import { listen } from '../../lib/http-server';
import { createLogger } from '../../lib/logger';
import { TokenSigner, TokenVerifier } from '../../lib/tokens';

it('cuts off a /graphql/stream reader that stops reading, without piling results up', async () => {
  const config = loadConfig({ LOG_LEVEL: 'silent', EVENT_HEARTBEAT_SECONDS: '1' });
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keys = {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    kid: 'k',
  };
  const token = new TokenSigner(keys, config.JWT_ISSUER).sign(
    { userId: 'u', sessionId: 's', roles: [], scopes: ['events:read'] },
    'access',
    600,
  ).token;

  let pulled = 0;
  let ended!: () => void;
  const subscriptionEnded = new Promise<void>((resolve) => (ended = resolve));
  async function* events(): AsyncGenerator<StreamEvent> {
    try {
      for (let seq = 1; ; seq++) {
        pulled++;
        yield {
          seq,
          eventId: `e${seq}`,
          type: 'test.big',
          userId: 'u',
          resourceId: 'r',
          occurredAt: new Date(),
          data: { blob: 'x'.repeat(1 << 20) },
        };
      }
    } finally {
      ended();
    }
  }
  const stream = { checkResumable: async () => undefined, subscribe: () => events() } as unknown as EventStream;
  const log = {
    sessionRevoked: async () => false,
    scopesOf: async (_u: string, _i: number, own: ReadonlySet<string>) => own,
    knownScopeChangeAt: () => undefined,
  } as unknown as EventLog;
  const service = await createEventsService({
    config,
    log,
    stream,
    verifier: new TokenVerifier(keys, config.JWT_ISSUER),
    logger: createLogger(config),
  });
  const app = express();
  app.use(service.router);
  const server = await listen(app, 0, '127.0.0.1');
  try {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = JSON.stringify({ query: 'subscription { events { seq data } }' });
    socket.write(
      `POST /graphql/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause(); // and never read

    const started = Date.now();
    await subscriptionEnded;
    expect(Date.now() - started).toBeLessThan(10_000);
    // Only what fits in the socket buffers (and a few waiting frames) was taken from the stream.
    expect(pulled).toBeLessThan(64);
    socket.destroy();
  } finally {
    await server.close(1000);
  }
});
