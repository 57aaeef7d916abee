// Scope changes from the event log (lib/revocations.ts, read with the revocations): two EventLog
// instances on one log stand for two processes. A token's scopes as issued give way to the newest
// `user.scopes_changed` that is not older than the token; a process that starts later reads the
// log back one token lifetime; a log that cannot be read fails the question (the caller answers
// 503), never the token's stale set.
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

const changed = (userId: string, scopes: string[], occurredAt = new Date()): OutboxEvent =>
  Object.assign(new OutboxEvent(), {
    seq: 1,
    eventId: crypto.randomUUID(),
    type: 'user.scopes_changed',
    userId,
    resourceId: userId,
    payload: JSON.stringify({ user_id: userId, scopes }),
    occurredAt,
  });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => Math.floor(ms / 1000);
const asIssued = new Set(['tts:read', 'tts:write']);

describe('scope changes from the event log', () => {
  it('apply to a token issued before them: at once where appended, within EVENT_POLL_MS elsewhere', async () => {
    const user = crypto.randomUUID();
    const iat = seconds(Date.now()) - 10;
    expect(await reader.scopesOf(user, iat, asIssued)).toBe(asIssued);
    await writer.append('auth', [changed(user, ['tts:read'])]);
    expect([...(await writer.scopesOf(user, iat, asIssued))]).toEqual(['tts:read']);
    await sleep(POLL_MS + 10);
    expect([...(await reader.scopesOf(user, iat, asIssued))]).toEqual(['tts:read']);
  });

  it('leave a token issued after them alone, and the newest change wins', async () => {
    const user = crypto.randomUUID();
    const now = Date.now();
    await writer.append('auth', [
      changed(user, ['notes:read'], new Date(now - 60_000)),
      changed(user, ['vault:read'], new Date(now - 30_000)),
    ]);
    await sleep(POLL_MS + 10);
    expect([...(await reader.scopesOf(user, seconds(now - 45_000), asIssued))]).toEqual(['vault:read']);
    expect(await reader.scopesOf(user, seconds(now), asIssued)).toBe(asIssued);
  });

  it('are known to a process that starts after them, back one token lifetime', async () => {
    const user = crypto.randomUUID();
    await writer.append('auth', [changed(user, [])]);
    const later = await EventLog.open({ ...config, MIGRATIONS_RUN: false });
    try {
      expect([...(await later.scopesOf(user, seconds(Date.now()) - 5, asIssued))]).toEqual([]);
    } finally {
      await later.close();
    }
  });

  it('fail the question when the log cannot be read, never answering the token as issued', async () => {
    const broken = await EventLog.open({ ...config, MIGRATIONS_RUN: false });
    const user = crypto.randomUUID();
    expect(await broken.scopesOf(user, seconds(Date.now()), asIssued)).toBe(asIssued);
    await broken.close();
    await sleep(POLL_MS + 10);
    await expect(broken.scopesOf(user, seconds(Date.now()), asIssued)).rejects.toThrow();
  });
});
