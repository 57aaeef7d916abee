// The webhook delivery worker when wake-ups cross processes (EVENT_LOG_URL: lib/wakeups.ts over
// NATS; here an in-memory transport stands for it): idle, it sends no query; a new delivery
// (dueNow() in a committed transaction) wakes it through the transport, and a failed attempt's
// retry is sent when it comes due, by a timer set for that time rather than by a poll.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { loadConfig, type Config } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { inTransaction } from '../../lib/database/transactions';
import { createLogger } from '../../lib/logger';
import { clearWakeTransport, setWakeTransport, WakeTransport } from '../../lib/wakeups';
import { integrationsSubgraph } from '../../subgraphs/integrations';
import { WebhookDeliveryWorker } from '../../subgraphs/integrations/delivery-worker';
import { DeliveryState, WebhookDelivery } from '../../subgraphs/integrations/entities/webhook-delivery';
import { Webhook } from '../../subgraphs/integrations/entities/webhook';
import { dueNow, NO_LEASE, webhookTopic } from '../../subgraphs/integrations/webhook-service';
import { newSecret } from '../../subgraphs/integrations/webhook-signing';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';
import { until } from '../helpers/wait';

let config: Config;
let db: DataSource;
let worker: WebhookDeliveryWorker | undefined;
let receiver: http.Server;
let url = '';
const arrivals: number[] = [];
const listeners = new Map<string, Set<() => void>>();
const notified: string[] = [];
const bus: WakeTransport = {
  notify(topic) {
    notified.push(topic);
    for (const l of listeners.get(topic) ?? []) setImmediate(l);
  },
  listen(topic, listener) {
    if (!listeners.has(topic)) listeners.set(topic, new Set());
    listeners.get(topic)!.add(listener);
    return () => listeners.get(topic)!.delete(listener);
  },
};

beforeAll(async () => {
  // The first attempt fails (500); the retry is answered 204.
  receiver = http.createServer((req, res) => {
    arrivals.push(Date.now());
    req.resume();
    res.writeHead(arrivals.length === 1 ? 500 : 204).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  config = loadConfig({
    ...isolatedEnv(),
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_POLL_MS: '20',
    POLL_MAX_IDLE_MS: '100',
    WEBHOOK_RETRY_BASE_SECONDS: '1',
  });
  db = await openDatabase(config, {
    name: 'integrations',
    entities: integrationsSubgraph.entities,
    migrations: integrationsSubgraph.migrations,
  });
  setWakeTransport(bus);
}, 60_000);
afterAll(async () => {
  clearWakeTransport(bus);
  await worker?.stop();
  receiver?.closeAllConnections();
  receiver?.close();
  await db?.destroy();
  await cleanupDatabases(config);
});

it('sends no query while idle, is woken by a new delivery, and retries by a timer', async () => {
  const queries = { n: 0 };
  const query = db.driver.createQueryRunner.bind(db.driver);
  // Every statement of the worker's goes through a query runner of this data source.
  jest.spyOn(db.driver, 'createQueryRunner').mockImplementation((mode) => {
    const runner = query(mode);
    const run = runner.query.bind(runner);
    runner.query = ((...args: Parameters<typeof run>) => {
      queries.n++;
      return run(...args);
    }) as typeof runner.query;
    return runner;
  });
  worker = new WebhookDeliveryWorker(db, config, createLogger(config));
  worker.start();
  // Its first look and the follow-ups after it; then nothing, however long (POLL_MAX_IDLE_MS is 100 ms).
  await new Promise((r) => setTimeout(r, 500));
  const idleFrom = queries.n;
  expect(idleFrom).toBeGreaterThan(0); // the count sees the worker's statements (its first look)
  await new Promise((r) => setTimeout(r, 1000));
  expect(queries.n - idleFrom).toBe(0);

  // A delivery, as the fan-out writes one: its commit wakes every worker through the transport.
  const now = new Date();
  const webhookId = uuidv7();
  await inTransaction(db, async (m) => {
    await m.insert(Webhook, {
      id: webhookId,
      ownerId: uuidv7(),
      url,
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
      nextDeliveryAt: null,
      leaseOwner: null,
      leaseUntil: NO_LEASE,
    });
    await m.insert(WebhookDelivery, {
      id: uuidv7(),
      webhookId,
      eventId: uuidv7(),
      eventType: 'thing.happened',
      eventSeq: 1,
      payload: '{}',
      state: DeliveryState.PENDING,
      attempts: 0,
      nextAttemptAt: now,
      occurredAt: now,
      createdAt: now,
    });
    await dueNow(m, webhookId);
  });
  expect(notified).toContain(webhookTopic(db));
  await until(() => arrivals.length >= 1, 'the first attempt', 10_000);
  // Failed: its retry 0.5–1 s later, sent when due without a poll in between.
  await until(
    async () => (await db.manager.findOneBy(WebhookDelivery, { webhookId }))?.state === DeliveryState.DELIVERED,
    'the retry delivered',
    15_000,
  );
  expect(arrivals).toHaveLength(2);
  expect(arrivals[1] - arrivals[0]).toBeGreaterThanOrEqual(450);
}, 60_000);
