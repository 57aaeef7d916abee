// The event log and stream below HTTP: relaying, ordering, and a consumer that stops reading.
import crypto from 'node:crypto';
import { EventLog } from '../../lib/event-log';
import { EventStream } from '../../lib/event-stream';
import { loadConfig } from '../../lib/config';
import { OutboxEvent } from '../../lib/outbox';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';

const config = loadConfig({ ...isolatedEnv(), LOG_LEVEL: 'silent' });
let log: EventLog;

beforeAll(async () => {
  log = await EventLog.open(config);
});
afterAll(async () => {
  await log.close();
  await cleanupDatabases(config);
});

const outboxRow = (userId: string, n: number): OutboxEvent =>
  Object.assign(new OutboxEvent(), { seq: n, eventId: crypto.randomUUID(), type: 'test.happened', userId, resourceId: `r${n}`, payload: JSON.stringify({ n }), occurredAt: new Date() });

describe('EventLog', () => {
  it('appends each event once, numbering them without gaps, even when offered again or concurrently', async () => {
    const user = crypto.randomUUID();
    const batch = Array.from({ length: 20 }, (_, i) => outboxRow(user, i));
    const before = (await log.position()).lastSeq;
    const counts = await Promise.all([log.append('a', batch.slice(0, 10)), log.append('b', batch.slice(10)), log.append('a', batch.slice(0, 10))]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(20);
    const rows = await log.read(before, 100, user);
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => before + 1 + i));
    expect(new Set(rows.map((r) => r.eventId)).size).toBe(20);
  });
});

describe('EventStream', () => {
  it('holds at most the buffer for a consumer that stops reading, then ends its stream', async () => {
    const stream = new EventStream(log, { pollMs: 10, bufferSize: 5 });
    await stream.start();
    try {
      const user = crypto.randomUUID();
      const events = stream.subscribe({ userId: user });
      const first = events.next(); // starts the subscription; nothing is read after this
      await log.append('t', [outboxRow(user, 0)]);
      expect((await first).value.resourceId).toBe('r0');
      await log.append('t', Array.from({ length: 50 }, (_, i) => outboxRow(user, i + 1)));
      await new Promise((r) => setTimeout(r, 200));
      const delivered = [];
      for await (const e of events) delivered.push(e.resourceId);
      // What the buffer held, then the end: the client resumes from the last one it got.
      expect(delivered).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
      expect(stream.subscriberCount).toBe(0);
    } finally {
      await stream.stop();
    }
  });

  it('forgets a consumer that leaves while waiting', async () => {
    const stream = new EventStream(log, { pollMs: 10, bufferSize: 5 });
    await stream.start();
    try {
      const events = stream.subscribe({ userId: crypto.randomUUID() });
      const pending = events.next();
      await new Promise((r) => setTimeout(r, 50));
      expect(stream.subscriberCount).toBe(1);
      await events.return(undefined);
      expect((await pending).done).toBe(true);
      expect(stream.subscriberCount).toBe(0);
    } finally {
      await stream.stop();
    }
  });
});
