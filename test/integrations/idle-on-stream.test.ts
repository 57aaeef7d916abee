// Issue 43: with EVENT_LOG_URL set, an idle process sends no query to MySQL. Its MySQL
// connections go through a counting proxy (test/helpers/mysql-counting-proxy.ts); once started
// and settled, nothing asked of it, it sends no command over IDLE_MS: no relay, reader, job
// runner, webhook delivery worker or vault enrichment worker polls; they wait for NATS wake-ups
// and for timers set for due times they know of. (MySQL only: SQLite has no connection to count.)
import crypto from 'node:crypto';
import { natsServers } from '../../lib/event-backends';
import { mysqlCountingProxy, CountingProxy } from '../helpers/mysql-counting-proxy';
import { isolatedEnv, startTestServer, TEST_DB, TestServer } from '../helpers/server';

const NATS_TEST_URL = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';
const stream = `S${crypto.randomBytes(6).toString('hex')}`;
/** Quiet this long after start counts as settled; then this long is measured. */
const QUIET_MS = 3000;
const IDLE_MS = 8000;
const SETTLE_MAX_MS = 60_000;

const onMysql = TEST_DB === 'mysql' ? it : it.skip;

let proxy: CountingProxy | undefined;
let server: TestServer | undefined;

afterAll(async () => {
  await server?.close();
  await proxy?.close();
  if (TEST_DB !== 'mysql') return;
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: natsServers(NATS_TEST_URL) });
  await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
  await nc.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

onMysql(
  'an idle process with the event log on JetStream sends no command to MySQL',
  async () => {
    const env = isolatedEnv();
    const direct = new URL(env.DATABASE_URL);
    proxy = await mysqlCountingProxy(direct);
    const proxied = new URL(env.DATABASE_URL);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    // Every module (integrations' webhooks, the vault's enrichment, the job runners) runs here.
    server = await startTestServer({
      ...env,
      DATABASE_URL: proxied.toString(),
      EVENT_LOG_URL: NATS_TEST_URL,
      EVENT_LOG_STREAM: stream,
      SUBGRAPHS: '',
      // As in `npm run bench -- fanout`: the synthesis worker still polls and heartbeats its
      // `synthesis_workers` row (not yet on wake-ups; a worker process of its own in the layout).
      SYNTHESIS_CONCURRENCY: '0',
    });
    // Settled: QUIET_MS without a command (start-up's migrations, first looks and their follow-ups).
    const started = Date.now();
    let last = proxy.commands();
    let quietSince = Date.now();
    while (Date.now() - quietSince < QUIET_MS) {
      if (Date.now() - started > SETTLE_MAX_MS) throw new Error(`never quiet: ${proxy.texts().slice(-20).join('\n')}`);
      await sleep(250);
      if (proxy.commands() !== last) {
        last = proxy.commands();
        quietSince = Date.now();
      }
    }
    const before = proxy.texts().length;
    await sleep(IDLE_MS);
    // The statements themselves, so a failure says which loop still polls.
    expect(proxy.texts().slice(before)).toEqual([]);
  },
  SETTLE_MAX_MS + IDLE_MS + 30_000,
);
