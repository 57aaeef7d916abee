// The event log on JetStream (EVENT_LOG_URL) with processes killed mid-flow: the integrations
// subgraph (its webhooks' fan-out is a durable consumer of the stream, its deliveries a worker)
// is SIGKILLed while voices are being created through the facade, then started again. Every
// voice.created still reaches the webhook receiver, and none is fanned out twice (only a delivery
// in flight at the kill may arrive twice, with the same webhook-id: at-least-once delivery).
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../lib/config';
import { natsServers } from '../../lib/event-backends';
import { api, login } from '../helpers/http';
import { DistributedLayout, ServiceProcess, startDistributed, startProcess } from '../helpers/processes';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { until } from '../helpers/wait';

const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;
const NATS_TEST_URL = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';

onMysql('the JetStream event log when a process is killed mid-flow', () => {
  const env = {
    ...isolatedEnv(),
    LOG_LEVEL: 'info',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    SUBGRAPH_SECRET: crypto.randomBytes(24).toString('hex'),
    EVENT_LOG_URL: NATS_TEST_URL,
    EVENT_LOG_STREAM: `K${crypto.randomBytes(6).toString('hex')}`,
  };
  let layout: DistributedLayout;
  let restarted: ServiceProcess | undefined;
  const arrivals = new Map<string, string[]>(); // voice id → webhook-ids received
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
      arrivals.set(body.id, [...(arrivals.get(body.id) ?? []), String(req.headers['webhook-id'])]);
      res.writeHead(204).end();
    });
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    layout = await startDistributed(env, { gateways: 1, facades: 1 });
  }, 180_000);

  afterAll(async () => {
    await restarted?.kill();
    await layout?.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await cleanupDatabases(loadConfig(env));
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: natsServers(NATS_TEST_URL) });
    await (await jetstreamManager(nc)).streams.delete(env.EVENT_LOG_STREAM).catch(() => undefined);
    await nc.close();
  }, 60_000);

  it('delivers every event once after the fan-out process is SIGKILLed and started again', async () => {
    const facade = api(layout.facades[0].url);
    const token = (await login(layout.facades[0].url, ADMIN)).access_token;
    const hook = await facade.post(
      '/api/v1/integrations/webhooks',
      { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, event_types: ['voice.created'] },
      { token },
    );
    expect(hook.status).toBe(202);
    const integrations = layout.subgraphs.find((p) => p.name === 'subgraph integrations')!;
    const voices: string[] = [];
    const create = async (n: number) => {
      const res = await facade.post('/api/v1/tts/voices', { name: `kill ${n}`, base_voice: 'f1' }, { token });
      expect(res.status).toBe(202);
      voices.push(res.body.id as string);
    };
    for (let n = 0; n < 5; n++) await create(n);
    await until(() => arrivals.size >= 1, 'a first delivery', 20_000);
    // Killed mid-flow: more voices come while it is down, and some were still to be fanned out.
    const killing = integrations.kill('SIGKILL');
    for (let n = 5; n < 10; n++) await create(n);
    await killing;
    restarted = await startProcess('subgraph integrations (again)', 'subgraph.js', ['integrations'], env);
    for (let n = 10; n < 15; n++) await create(n);
    await until(() => voices.every((v) => arrivals.has(v)), 'every voice delivered', 60_000);
    const twice = voices.filter((v) => arrivals.get(v)!.length > 1);
    expect(twice.length).toBeLessThanOrEqual(1);
    for (const v of twice) expect(new Set(arrivals.get(v)).size).toBe(1); // the same webhook-id: a redelivery
  }, 180_000);
});
