// The event log's one interface (lib/event-backends.ts), one suite, both implementations: the
// `events` table (EVENT_LOG_URL unset) and a JetStream stream (EVENT_LOG_URL=nats://…, the NATS
// server at 127.0.0.1:4222 that runs here and in CI; each run makes a stream of its own). Two
// EventLog instances on one log stand for two processes.
import crypto from 'node:crypto';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../lib/config';
import { JetStreamBackend, natsServers } from '../../lib/event-backends';
import { EventConsumer, EventConsumerPosition, createEventConsumersTable } from '../../lib/event-consumer';
import { EventLog, LoggedEvent } from '../../lib/event-log';
import { EventStream, StreamEvent } from '../../lib/event-stream';
import { OutboxEvent } from '../../lib/outbox';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';
import { until } from '../helpers/wait';

export const NATS_TEST_URL = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';

const event = (type: string, userId: string, resourceId = crypto.randomUUID(), data = {}): OutboxEvent =>
  Object.assign(new OutboxEvent(), {
    seq: 1,
    eventId: crypto.randomUUID(),
    type,
    userId,
    resourceId,
    payload: JSON.stringify(data),
    occurredAt: new Date(),
  });

const backends: [string, Record<string, string>][] = [
  ['table', {}],
  ['jetstream', { EVENT_LOG_URL: NATS_TEST_URL }],
];

describe.each(backends)('the event log on its %s backend', (kind, extra) => {
  const stream = `T${crypto.randomBytes(6).toString('hex')}`;
  const env = { ...isolatedEnv(), LOG_LEVEL: 'silent', EVENT_LOG_STREAM: stream, EVENT_POLL_MS: '20', ...extra };
  const config = loadConfig(env);
  let writer: EventLog;
  let reader: EventLog;

  beforeAll(async () => {
    writer = await EventLog.open(config);
    reader = await EventLog.open({ ...config, MIGRATIONS_RUN: false });
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
    if (kind === 'jetstream') {
      const { connect } = await import('@nats-io/transport-node');
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const nc = await connect({ servers: natsServers(NATS_TEST_URL) });
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
    await cleanupDatabases(config);
  });

  it('is the backend EVENT_LOG_URL names', async () => {
    expect(writer.backend.kind).toBe(kind);
    expect(writer.backend instanceof JetStreamBackend).toBe(kind === 'jetstream');
    expect(await writer.ready()).toBe(true); // readiness: the events database and the backend answer
  });

  it('hands out positions in append order, and keeps an event offered twice once (its id)', async () => {
    const user = crypto.randomUUID();
    const { lastSeq: start } = await writer.position();
    const first = [event('note.created', user), event('note.updated', user)];
    expect(await writer.append('notes', first)).toBe(2);
    // A relay that crashed before deleting its outbox rows offers them again, with one more.
    const again = [...first, event('note.deleted', user)];
    expect(await writer.append('notes', again)).toBe(1);
    const read = await reader.read(start, 100);
    expect(read.map((e) => e.eventId)).toEqual(again.map((e) => e.eventId));
    expect(read.map((e) => e.seq)).toEqual([start + 1, start + 2, start + 3]);
    expect(read[0]).toMatchObject({ type: 'note.created', userId: user, source: 'notes', payload: '{}' });
    expect(read[0].occurredAt.getTime()).toBe(first[0].occurredAt.getTime());
    expect((await reader.position()).lastSeq).toBe(start + 3);
  });

  it("reads one user's events, from a position, at most `limit`", async () => {
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    const { lastSeq: start } = await writer.position();
    await writer.append('tts', [event('voice.created', a), event('voice.created', b), event('voice.deleted', a)]);
    const mine = await reader.read(start, 100, a);
    expect(mine.map((e) => [e.type, e.userId])).toEqual([
      ['voice.created', a],
      ['voice.deleted', a],
    ]);
    expect((await reader.read(mine[0].seq, 100, a)).map((e) => e.type)).toEqual(['voice.deleted']);
    expect(await reader.read(start, 1)).toHaveLength(1);
    expect(await reader.read(start + 3, 100)).toEqual([]);
  });

  it("wakes this process's listeners on an append (and every process's on JetStream)", async () => {
    let here = 0;
    let there = 0;
    const stopHere = writer.onAppend(() => here++);
    const stopThere = reader.onAppend(() => there++);
    // The subscription reaches the server before the other connection publishes.
    if (reader.backend instanceof JetStreamBackend) await reader.backend.nc.flush();
    try {
      await writer.append('notes', [event('note.created', crypto.randomUUID())]);
      await until(async () => here > 0 || undefined, 'a wake-up in the appending process');
      if (writer.backend.wakesAcrossProcesses) await until(async () => there > 0 || undefined, 'a wake-up elsewhere');
    } finally {
      stopHere();
      stopThere();
    }
  });

  it('sees a revocation appended by another process (the revocation reader)', async () => {
    const session = crypto.randomUUID();
    expect(await reader.sessionRevoked(session)).toBe(false);
    await writer.append('auth', [event('session.revoked', crypto.randomUUID(), session)]);
    await until(async () => (await reader.sessionRevoked(session)) || undefined, 'the revocation read');
  });

  it('streams events to a subscriber with the log positions as ids, resuming from one', async () => {
    const user = crypto.randomUUID();
    const es = new EventStream(reader, { pollMs: 20, maxPollMs: 200, bufferSize: 100 });
    await es.start();
    try {
      const { lastSeq: start } = await writer.position();
      const live = es.subscribe({ userId: user });
      const got: StreamEvent[] = [];
      const collecting = (async () => {
        for await (const e of live) {
          got.push(e);
          if (got.length === 2) break;
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      await writer.append('notes', [event('note.created', user), event('note.created', crypto.randomUUID())]);
      await writer.append('notes', [event('note.deleted', user)]);
      await collecting;
      expect(got.map((e) => e.type)).toEqual(['note.created', 'note.deleted']);
      expect(got[0].seq).toBe(start + 1);
      expect(got[1].seq).toBe(start + 3);
      // Resume after the first: the second again, from the log.
      const resumed = es.subscribe({ userId: user, after: got[0].seq });
      const next = await resumed.next();
      expect(next.value).toMatchObject({ seq: got[1].seq, type: 'note.deleted' });
      await resumed.return(undefined);
      await es.checkResumable(start);
      await expect(es.checkResumable(start + 1000)).rejects.toMatchObject({ code: 'validation_error' });
    } finally {
      await es.stop();
    }
  });

  it("runs a durable reader: each event of its types once, its position with the reader's write", async () => {
    const ds = new DataSource({ type: 'better-sqlite3', database: ':memory:', entities: [EventConsumerPosition] });
    await ds.initialize();
    const qr = ds.createQueryRunner();
    await createEventConsumersTable(qr);
    await qr.release();
    const handled: LoggedEvent[] = [];
    const make = () =>
      new EventConsumer({
        name: 'test.reader',
        dataSource: ds,
        log: reader,
        types: ['user.deleted'],
        intervalMs: 20,
        handle: async (_m, e) => {
          handled.push(e);
        },
      });
    const user = crypto.randomUUID();
    // Started after some events: it starts at the beginning (handlers are idempotent).
    const consumer = make();
    await consumer.start();
    try {
      await writer.append('auth', [event('user.deleted', user), event('note.created', user)]);
      await until(async () => handled.some((e) => e.userId === user) || undefined, 'the event handled');
      const seq = handled.find((e) => e.userId === user)!.seq;
      await until(
        async () =>
          (await ds.manager.findOneBy(EventConsumerPosition, { name: 'test.reader' }))!.lastSeq >= seq || undefined,
        'the position stored',
      );
      await consumer.stop();
      // Another process taking over (or this one restarted) does not handle it again.
      const other = make();
      await other.start();
      const second = crypto.randomUUID();
      await writer.append('auth', [event('user.deleted', second)]);
      await until(async () => handled.some((e) => e.userId === second) || undefined, 'the next event handled');
      await other.stop();
      expect(handled.filter((e) => e.userId === user)).toHaveLength(1);
      expect(handled.every((e) => e.type === 'user.deleted')).toBe(true);
    } finally {
      await consumer.stop();
      await ds.destroy();
    }
  });
});
