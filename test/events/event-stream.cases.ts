// The event log and stream below HTTP: relaying, ordering, and a consumer that stops reading.
import crypto from 'node:crypto';
import { EventLog } from '../../lib/event-log';
import { EventStream } from '../../lib/event-stream';
import { loadConfig } from '../../lib/config';
import { OutboxEvent } from '../../lib/outbox';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';
import { until } from '../helpers/wait';

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
  Object.assign(new OutboxEvent(), {
    seq: n,
    eventId: crypto.randomUUID(),
    type: 'test.happened',
    userId,
    resourceId: `r${n}`,
    payload: JSON.stringify({ n }),
    occurredAt: new Date(),
  });

describe('EventLog', () => {
  it('appends each event once, numbering them without gaps, even when offered again or concurrently', async () => {
    const user = crypto.randomUUID();
    const batch = Array.from({ length: 20 }, (_, i) => outboxRow(user, i));
    const before = (await log.position()).lastSeq;
    const counts = await Promise.all([
      log.append('a', batch.slice(0, 10)),
      log.append('b', batch.slice(10)),
      log.append('a', batch.slice(0, 10)),
    ]);
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
      const appended = await log.append(
        't',
        Array.from({ length: 50 }, (_, i) => outboxRow(user, i + 1)),
      );
      // Waits for the poll to have read all 50 (its head), not for a time.
      const { lastSeq } = await log.position();
      await until(() => (stream as unknown as { head: number }).head >= lastSeq, 'the poll to read the 50 events');
      expect(appended).toBe(50);
      const delivered = [];
      for await (const e of events) delivered.push(e.resourceId);
      // What the buffer held, then the end: the client resumes from the last one it got.
      expect(delivered).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
      expect(stream.subscriberCount).toBe(0);
    } finally {
      await stream.stop();
    }
  });

  it('hands over from replay to live with no duplicate: events queued live during the replay are skipped', async () => {
    const stream = new EventStream(log, { pollMs: 10, bufferSize: 100 });
    await stream.start();
    try {
      const user = crypto.randomUUID();
      const after = (await log.position()).lastSeq;
      // Registered now; its replay from the log starts only at its first next().
      const resumed = stream.subscribe({ userId: user, after });
      const live = stream.subscribe({ userId: user });
      const liveFirst = live.next();
      await log.append(
        't',
        [0, 1, 2].map((n) => outboxRow(user, n)),
      );
      // The poll that gave `live` these events queued them for `resumed` too.
      expect((await liveFirst).value.resourceId).toBe('r0');
      expect((await live.next()).value.resourceId).toBe('r1');
      expect((await live.next()).value.resourceId).toBe('r2');
      const got: string[] = [];
      for (let i = 0; i < 3; i++) got.push((await resumed.next()).value.resourceId);
      expect(got).toEqual(['r0', 'r1', 'r2']); // from the log
      await log.append('t', [outboxRow(user, 3)]);
      // Next comes the live r3, not r0–r2 again from the queue.
      expect((await resumed.next()).value.resourceId).toBe('r3');
      await live.return(undefined);
      await resumed.return(undefined);
    } finally {
      await stream.stop();
    }
  });

  it('misses nothing written while the replay reads the log: the subscriber is live before it replays', async () => {
    const stream = new EventStream(log, { pollMs: 10, bufferSize: 100 });
    await stream.start();
    const read = log.read.bind(log);
    try {
      const user = crypto.randomUUID();
      const after = (await log.position()).lastSeq;
      await log.append('t', [outboxRow(user, 0)]);
      // Another writer commits right after the replay's read, and the poll has read it before
      // this subscriber goes on from its replay.
      const spy = jest.spyOn(log, 'read').mockImplementationOnce(async (...args) => {
        const rows = await read(...args);
        await log.append('t', [outboxRow(user, 1)]);
        const { lastSeq } = await log.position();
        await until(() => (stream as unknown as { head: number }).head >= lastSeq, 'the poll to read it');
        return rows;
      });
      const events = stream.subscribe({ userId: user, after });
      expect((await events.next()).value.resourceId).toBe('r0');
      spy.mockRestore();
      await log.append('t', [outboxRow(user, 2)]);
      expect((await events.next()).value.resourceId).toBe('r1');
      expect((await events.next()).value.resourceId).toBe('r2');
      await events.return(undefined);
    } finally {
      jest.restoreAllMocks();
      await stream.stop();
    }
  });

  it("replays from the position asked for, only the subscriber's events and types, and ends after endAfter", async () => {
    const stream = new EventStream(log, { pollMs: 10, bufferSize: 100 });
    await stream.start();
    try {
      const user = crypto.randomUUID();
      const after = (await log.position()).lastSeq;
      const rows = [0, 1, 2, 3].map((n) => outboxRow(user, n));
      rows[1].type = 'test.other';
      await log.append('t', [rows[0], outboxRow(crypto.randomUUID(), 9), ...rows.slice(1)]);
      const fromSecond = stream.subscribe({
        userId: user,
        after: after + 1,
        types: ['test.happened'],
        endAfter: (e) => e.resourceId === 'r2',
      });
      const got = [];
      for await (const e of fromSecond) got.push([e.resourceId, e.seq, e.data]);
      // r0 is at after+1 (skipped by the position), r9 is another user's, r1 another type; r3 after the end.
      expect(got).toEqual([['r2', after + 4, { n: 2 }]]);
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
      expect(stream.subscriberCount).toBe(1);
      await events.return(undefined);
      expect((await pending).done).toBe(true);
      expect(stream.subscriberCount).toBe(0);
    } finally {
      await stream.stop();
    }
  });
});

describe('EventStream, resuming', () => {
  it('replays a backlog longer than one page of the log (500) whole, in order', async () => {
    const stream = new EventStream(log, { pollMs: 10, bufferSize: 100 });
    await stream.start();
    try {
      const user = crypto.randomUUID();
      const after = (await log.position()).lastSeq;
      const count = 1001;
      await log.append(
        'backlog',
        Array.from({ length: count }, (_, n) => outboxRow(user, n)),
      );
      const got: number[] = [];
      for await (const e of stream.subscribe({
        userId: user,
        after,
        endAfter: (e) => e.resourceId === `r${count - 1}`,
      }))
        got.push(e.seq);
      expect(got).toEqual(Array.from({ length: count }, (_, n) => after + 1 + n));
    } finally {
      await stream.stop();
    }
  });

  // Last in the file: it prunes the log.
  it('resumes from any kept position, refuses a pruned one (resync_required) and one past the end (validation_error)', async () => {
    const stream = new EventStream(log, { pollMs: 10, bufferSize: 100 });
    await log.append('prune me', [outboxRow(crypto.randomUUID(), 1), outboxRow(crypto.randomUUID(), 2)]);
    await log.prune(new Date(Date.now() + 60_000));
    const { prunedThrough, lastSeq } = await log.position();
    expect(prunedThrough).toBeGreaterThan(0);
    await expect(stream.checkResumable(undefined)).resolves.toBeUndefined();
    await expect(stream.checkResumable(prunedThrough)).resolves.toBeUndefined();
    await expect(stream.checkResumable(lastSeq)).resolves.toBeUndefined();
    await expect(stream.checkResumable(prunedThrough - 1)).rejects.toMatchObject({ code: 'resync_required' });
    await expect(stream.checkResumable(lastSeq + 1)).rejects.toMatchObject({
      code: 'validation_error',
      message: `Position ${lastSeq + 1} lies past the end of the event stream (its newest position is ${lastSeq}); start again without a position.`,
      details: { after: ['is past the end of the event stream'] },
    });
  });
});
