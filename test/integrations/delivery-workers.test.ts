// Webhook delivery workers in separate processes (on SQLite and MySQL) (`npm run start:worker -- integrations`) on one
// database: one is killed (SIGKILL) with an attempt in flight; the others resume its endpoints
// once its leases end. Every event reaches its endpoint at least once, in order, never two
// attempts at one endpoint at a time, and only the attempts the killed worker had in flight are
// repeated (with the same webhook-id).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { v7 as uuidv7 } from 'uuid';
import { IsNull, type DataSource } from 'typeorm';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { EventLog } from '../../lib/event-log';
import { integrationsSubgraph } from '../../subgraphs/integrations';
import { DeliveryState, WebhookDelivery } from '../../subgraphs/integrations/entities/webhook-delivery';
import { Webhook } from '../../subgraphs/integrations/entities/webhook';
import { newSecret } from '../../subgraphs/integrations/webhook-signing';
import { startProcess } from '../helpers/processes';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';
import { until } from '../helpers/wait';

const ENDPOINTS = 12;
const EVENTS = 8;

describe('webhook delivery worker processes', () => {
  const env = {
    ...isolatedEnv(),
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_LEASE_SECONDS: '2',
    WEBHOOK_POLL_MS: '20',
    POLL_MAX_IDLE_MS: '200',
    WEBHOOK_TIMEOUT_SECONDS: '60',
  };
  const config = loadConfig(env);
  let db: DataSource;
  let log: EventLog;
  const received = new Map<string, string[]>();
  const inFlight = new Map<string, number>();
  let mostInFlight = 0;
  let hangFirst = true;
  let receiver: http.Server;
  let url = '';

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const path = req.url!;
      const id = String(req.headers['webhook-id']);
      received.set(path, [...(received.get(path) ?? []), id]);
      inFlight.set(path, (inFlight.get(path) ?? 0) + 1);
      mostInFlight = Math.max(mostInFlight, inFlight.get(path)!);
      res.on('close', () => inFlight.set(path, inFlight.get(path)! - 1));
      req.resume();
      // The first request to /ep0 is never answered: its worker is killed while it waits.
      if (path === '/ep0' && hangFirst) {
        hangFirst = false;
        return;
      }
      setTimeout(() => res.writeHead(204).end(), 5);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    log = await EventLog.open(config);
    db = await openDatabase(config, {
      name: 'integrations',
      entities: integrationsSubgraph.entities,
      migrations: integrationsSubgraph.migrations,
    });
  });
  afterAll(async () => {
    receiver?.closeAllConnections();
    receiver?.close();
    await db?.destroy();
    await log?.close();
    await cleanupDatabases(config);
  });

  it('resumes a killed worker’s endpoints; every event delivered at least once, in order, one at a time', async () => {
    const now = new Date();
    const expected = new Map<string, string[]>();
    for (let e = 0; e < ENDPOINTS; e++) {
      const webhookId = uuidv7();
      await db.manager.insert(Webhook, {
        id: webhookId,
        ownerId: uuidv7(),
        url: `${url}/ep${e}`,
        eventTypes: ['*'],
        description: null,
        enabled: true,
        allUsers: false,
        disabledReason: null,
        version: 1,
        createdAt: now,
        updatedAt: now,
        secret: newSecret(),
        previousSecret: null,
        previousSecretUntil: null,
        nextDeliveryAt: now,
        leaseOwner: null,
        leaseUntil: new Date(0),
      });
      const ids = Array.from({ length: EVENTS }, () => uuidv7());
      expected.set(`/ep${e}`, ids);
      await db.manager.insert(
        WebhookDelivery,
        ids.map((eventId, i) => ({
          id: uuidv7(),
          webhookId,
          eventId,
          eventType: 'thing.happened',
          eventSeq: i + 1,
          payload: JSON.stringify({ type: 'thing.happened', n: i }),
          state: DeliveryState.PENDING,
          attempts: 0,
          nextAttemptAt: now,
          occurredAt: now,
          createdAt: now,
        })),
      );
    }

    const doomed = await startProcess('worker 1', 'worker.js', ['integrations'], env);
    await until(() => received.get('/ep0')?.length, 'the first attempt at /ep0', 30_000);
    await doomed.kill('SIGKILL');
    const [second, third] = await Promise.all([
      startProcess('worker 2', 'worker.js', ['integrations'], env),
      startProcess('worker 3', 'worker.js', ['integrations'], env),
    ]);
    try {
      await until(
        async () =>
          (await db.manager.countBy(WebhookDelivery, { state: DeliveryState.DELIVERED })) === ENDPOINTS * EVENTS,
        'every delivery',
        60_000,
      );
    } finally {
      await Promise.all([second.kill(), third.kill()]);
    }
    expect(mostInFlight).toBe(1);
    let repeated = 0;
    for (const [path, ids] of expected) {
      const got = received.get(path) ?? [];
      // Repeats only right after themselves (the attempt the killed worker had in flight).
      const distinct = got.filter((id, i) => id !== got[i - 1]);
      expect([path, distinct]).toEqual([path, ids]);
      repeated += got.length - distinct.length;
    }
    // /ep0's hung attempt is made again; at most one more per endpoint the killed worker was sending to.
    expect(received.get('/ep0')!.slice(0, 2)).toEqual([expected.get('/ep0')![0], expected.get('/ep0')![0]]);
    expect(repeated).toBeGreaterThanOrEqual(1);
    expect(repeated).toBeLessThanOrEqual(ENDPOINTS);
    // Nothing left waiting, no lease held.
    expect(await db.manager.countBy(Webhook, { leaseOwner: IsNull(), nextDeliveryAt: IsNull() })).toBe(ENDPOINTS);
  }, 120_000);
});
