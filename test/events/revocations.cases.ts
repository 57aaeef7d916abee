// The revocation set (lib/revocations.ts) below HTTP: two EventLog instances on one log stand for
// two processes. Whatever a process remembers, a revocation appended by any process is refused by
// every process no later than EVENT_POLL_MS after it is in the log, and at once by the process
// that appended it; a log that cannot be read fails the question instead of answering from memory.
import crypto from 'node:crypto';
import { loadConfig } from '../../lib/config';
import { EventLog } from '../../lib/event-log';
import { OutboxEvent } from '../../lib/outbox';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';

const env = { ...isolatedEnv(), LOG_LEVEL: 'silent' };
const POLL_MS = 300;
const config = loadConfig({ ...env, EVENT_POLL_MS: String(POLL_MS) });
let writer: EventLog;
let reader: EventLog;

beforeAll(async () => {
  writer = await EventLog.open(config);
  reader = await EventLog.open({ ...config, MIGRATIONS_RUN: false });
});
afterAll(async () => {
  await writer.close();
  await reader.close();
  await cleanupDatabases(config);
});

const event = (type: string, resourceId: string): OutboxEvent =>
  Object.assign(new OutboxEvent(), {
    seq: 1,
    eventId: crypto.randomUUID(),
    type,
    userId: crypto.randomUUID(),
    resourceId,
    payload: '{}',
    occurredAt: new Date(),
  });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('session revocations from the event log', () => {
  it('are refused by the appending process at once, and by every other within EVENT_POLL_MS', async () => {
    const session = crypto.randomUUID();
    // Both remember the session as live.
    expect(await reader.sessionRevoked(session)).toBe(false);
    expect(await writer.sessionRevoked(session)).toBe(false);
    await writer.append('auth', [event('session.revoked', session)]);
    const appendedAt = Date.now();
    expect(await writer.sessionRevoked(session)).toBe(true);
    // The other process may answer from what it read up to POLL_MS ago, never from older.
    await sleep(Math.max(0, appendedAt + POLL_MS + 10 - Date.now()));
    expect(await reader.sessionRevoked(session)).toBe(true);
    expect(await reader.sessionRevoked(session)).toBe(true);
  });

  it('count only session.revoked events, however many were appended since the last reading', async () => {
    const live = crypto.randomUUID();
    const revoked = Array.from({ length: 1205 }, () => crypto.randomUUID());
    expect(await reader.sessionRevoked(live)).toBe(false);
    await writer.append('auth', [
      event('session.created', live),
      ...revoked.map((id) => event('session.revoked', id)),
      event('voice.deleted', live),
    ]);
    await sleep(POLL_MS + 10);
    expect(await reader.sessionRevoked(revoked[0])).toBe(true);
    expect(await reader.sessionRevoked(revoked[1204])).toBe(true);
    expect(await reader.sessionRevoked(live)).toBe(false);
  });

  it('is known to a process that starts after the revocation', async () => {
    const session = crypto.randomUUID();
    await writer.append('auth', [event('session.revoked', session)]);
    const late = await EventLog.open({ ...config, MIGRATIONS_RUN: false });
    try {
      expect(await late.sessionRevoked(session)).toBe(true);
      expect(await late.sessionRevoked(crypto.randomUUID())).toBe(false);
    } finally {
      await late.close();
    }
  });

  // No token of a revoked session is valid longer than the longest token lifetime after the
  // revocation (plus a margin for clocks): kept that long, memory is bounded by an hour of
  // revocations, not by the log's week.
  const keepMs = (Math.max(config.ACCESS_TOKEN_TTL_SECONDS, config.STREAM_TICKET_TTL_SECONDS) + 300) * 1000;
  const revokedAt = (id: string, at: Date) => Object.assign(event('session.revoked', id), { occurredAt: at });

  it('are not read by a process that starts once every token of the session has expired', async () => {
    const old = crypto.randomUUID();
    const recent = crypto.randomUUID();
    await writer.append('auth', [
      revokedAt(old, new Date(Date.now() - keepMs - 60_000)),
      revokedAt(recent, new Date(Date.now() - keepMs + 60_000)),
    ]);
    const late = await EventLog.open({ ...config, MIGRATIONS_RUN: false });
    try {
      expect(await late.sessionRevoked(recent)).toBe(true);
      expect(await late.sessionRevoked(old)).toBe(false);
    } finally {
      await late.close();
    }
  });

  it('are forgotten once every token of the session has expired', async () => {
    const session = crypto.randomUUID();
    const other = await EventLog.open({ ...config, MIGRATIONS_RUN: false });
    try {
      await writer.append('auth', [event('session.revoked', session)]);
      await sleep(POLL_MS + 10);
      expect(await other.sessionRevoked(session)).toBe(true);
      const held = other.revocationsHeld;
      expect(held).toBeGreaterThan(0);
      const realNow = Date.now();
      const later = jest.spyOn(Date, 'now').mockReturnValue(realNow + keepMs + 61_000);
      try {
        await sleep(POLL_MS + 10);
        expect(await other.sessionRevoked(session)).toBe(false);
        expect(other.revocationsHeld).toBe(0);
      } finally {
        later.mockRestore();
      }
    } finally {
      await other.close();
    }
  });

  it('fails the question when the log cannot be read, once what it read is older than EVENT_POLL_MS', async () => {
    const broken = await EventLog.open({ ...config, MIGRATIONS_RUN: false });
    expect(await broken.sessionRevoked(crypto.randomUUID())).toBe(false);
    await broken.close();
    await sleep(POLL_MS + 10);
    await expect(broken.sessionRevoked(crypto.randomUUID())).rejects.toThrow();
  });
});
