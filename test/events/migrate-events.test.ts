// `npm run migrate-events` (bin/migrate-events.ts): a table log copied into a JetStream stream
// keeps each event's id and position (so consumers' positions and SSE ids carry over), starts
// where the table's kept events start, and a second run copies nothing twice.
import crypto from 'node:crypto';
import { migrateEvents } from '../../bin/migrate-events';
import { loadConfig } from '../../lib/config';
import { natsServers } from '../../lib/event-backends';
import { EventLog } from '../../lib/event-log';
import { OutboxEvent } from '../../lib/outbox';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';

const NATS_TEST_URL = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';
const stream = `M${crypto.randomBytes(6).toString('hex')}`;
const env = { ...isolatedEnv(), LOG_LEVEL: 'silent', EVENT_LOG_STREAM: stream };
const config = loadConfig(env);

const event = (type: string, occurredAt = new Date()): OutboxEvent =>
  Object.assign(new OutboxEvent(), {
    seq: 1,
    eventId: crypto.randomUUID(),
    type,
    userId: crypto.randomUUID(),
    resourceId: crypto.randomUUID(),
    payload: '{"n":1}',
    occurredAt,
  });

afterAll(async () => {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: natsServers(NATS_TEST_URL) });
  await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
  await nc.close();
  await cleanupDatabases(config);
});

it('copies the table log into the stream once, keeping ids and positions', async () => {
  const table = await EventLog.open(config);
  const old = event('note.created', new Date(Date.now() - 86_400_000));
  const kept = [event('note.updated'), event('session.revoked'), event('voice.created')];
  await table.append('notes', [old, ...kept]);
  expect(await table.prune(new Date(Date.now() - 3_600_000))).toBe(1);
  const rows = await table.read(0, 100);
  await table.close();
  expect(rows.map((r) => r.seq)).toEqual([2, 3, 4]);

  expect(await migrateEvents({ ...env })).toBe(2); // EVENT_LOG_URL unset
  const withNats = { ...env, EVENT_LOG_URL: NATS_TEST_URL, MIGRATIONS_RUN: 'false' };
  expect(await migrateEvents(withNats)).toBe(0);
  expect(await migrateEvents(withNats)).toBe(0); // again: nothing twice

  const log = await EventLog.open(loadConfig(withNats));
  try {
    expect(log.backend.kind).toBe('jetstream');
    expect(await log.position()).toEqual({ lastSeq: 4, prunedThrough: 1 });
    const copied = await log.read(0, 100);
    expect(copied.map((e) => [e.seq, e.eventId, e.type, e.source, e.payload])).toEqual(
      rows.map((r) => [r.seq, r.eventId, r.type, 'notes', '{"n":1}']),
    );
    // Relays go on from there: the next event is position 5; one already copied is dropped.
    expect(await log.append('notes', [kept[0], event('note.deleted')])).toBe(1);
    expect((await log.position()).lastSeq).toBe(5);
  } finally {
    await log.close();
  }
});
