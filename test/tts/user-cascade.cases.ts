// Deleting a user deletes their voices and syntheses (with the audio) in the tts subgraph, which
// learns of it only from the `user.deleted` event. Two more tts processes run beside the test
// server's own, all following the same event log: each voice gets exactly one voice.deleted, and
// the consumers race for real in the second test.
import fs from 'node:fs';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { startProcess, ServiceProcess } from '../helpers/processes';
import { openDatabase } from '../../lib/database/open';
import { EventConsumer, EventConsumerPosition } from '../../lib/event-consumer';
import { EventLog, LoggedEvent } from '../../lib/event-log';
import { OutboxEvent } from '../../lib/outbox';
import { ttsSubgraph } from '../../subgraphs/tts';
import { DiskAudioStore } from '../../subgraphs/tts/audio/audio-store';
import { jobQueue } from '../../lib/kit/user-cascade';
import { userDeletionConsumer } from '../../subgraphs/tts/user-cascade';
import { api, createUserAndLogin, login } from '../helpers/http';
import { until } from '../helpers/wait';
import { openStream, OpenStream } from '../helpers/sse';
import { ADMIN, startTestServer, TEST_DB, TestServer } from '../helpers/server';
import { audioDir } from '../../subgraphs/tts/settings';

let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;
let audit: OpenStream;
const processes: ServiceProcess[] = [];
let tts: DataSource;
let log: EventLog;

beforeAll(async () => {
  server = await startTestServer({ LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000' });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
  audit = await openStream(`${server.url}/api/v1/events?scope=all`, {
    token: (await login(server.url, ADMIN)).access_token,
  });
  // Two tts subgraph processes on the same databases (and audio folder); they render nothing.
  const env = {
    DATA_DIR: server.config.dataDir,
    DATABASE_URL: server.config.DATABASE_URL,
    LOG_LEVEL: 'info',
    SYNTHESIS_CONCURRENCY: '0',
  };
  for (let i = 1; i <= 2; i++) processes.push(await startProcess(`tts ${i}`, 'subgraph.js', ['tts'], env, 60_000));
  tts = await openDatabase(
    { ...server.config, MIGRATIONS_RUN: false },
    { name: 'tts', entities: ttsSubgraph.entities, migrations: [] },
  );
  log = await EventLog.open({ ...server.config, MIGRATIONS_RUN: false });
}, 120_000);

afterAll(async () => {
  audit?.close();
  await Promise.all(processes.map((p) => p.kill()));
  await tts?.destroy();
  await log?.close();
  await server?.close();
}, 60_000);

/** A user with voices and a finished synthesis (audio on disk). */
async function userWithData(name: string, voiceCount: number) {
  const user = await createUserAndLogin(server.url, adminToken, name, `${name} password 123`);
  const voices: string[] = [];
  for (let i = 0; i < voiceCount; i++) {
    const res = await http.post('/api/v1/tts/voices', { name: `voice ${i}`, base_voice: 'f3' }, { token: user.token });
    expect(res.status).toBe(202);
    voices.push(res.body.id);
  }
  const synthesis = await http.post(
    '/api/v1/tts/syntheses',
    { text: 'Gone soon.', voice_id: voices[0] },
    { token: user.token },
  );
  expect(synthesis.status).toBe(202);
  await audit.waitFor((f) => f.event === 'synthesis.succeeded' && f.data.id === synthesis.body.id, 1, 30_000);
  const audio = path.join(audioDir(server.config), `${synthesis.body.id}.wav`);
  expect(fs.existsSync(audio)).toBe(true);
  return { ...user, voices, synthesisId: synthesis.body.id as string, audio };
}

const voiceDeletedEvents = (voiceIds: string[]) =>
  log.dataSource.manager.find(LoggedEvent, {
    where: voiceIds.map((id) => ({ resourceId: id, type: 'voice.deleted' })),
  });

/** Waits until every tts consumer has moved past `seq` (the position row is shared; the in-memory ones are not). */
async function consumedThrough(seq: number) {
  for (;;) {
    const row = await tts.manager.findOneBy(EventConsumerPosition, { name: 'tts.user-deleted' });
    if (row && row.lastSeq >= seq) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The relay appends to the log, then deletes from the outbox: the log can hold the events a moment before. */
const outboxDrained = () =>
  until(
    async () => (await tts.manager.countBy(OutboxEvent, { type: 'voice.deleted' })) === 0,
    'the relayed voice.deleted events to leave the tts outbox',
  );

describe('the user.deleted cascade in the tts subgraph', () => {
  it('deletes the voices and syntheses with their audio, once, with three tts processes following the log', async () => {
    const user = await userWithData('cascaded', 3);
    const res = await http.delete(`/api/v1/admin/users/${user.id}?version=1`, { token: adminToken });
    expect(res.status).toBe(202);
    const deleted = (await audit.waitFor((f) => f.event === 'user.deleted' && f.data.user_id === user.id))[0];

    const frames = await audit.waitFor(
      (f) => f.event === 'voice.deleted' && user.voices.includes(f.data.id),
      3,
      30_000,
    );
    expect(frames.map((f) => f.data)).toEqual(
      user.voices.map(() => expect.objectContaining({ reason: 'user_deleted', user_id: user.id })),
    );
    await consumedThrough(Number(deleted.id));
    // Once each, although three consumers saw the event.
    expect((await voiceDeletedEvents(user.voices)).map((e) => e.resourceId).sort()).toEqual([...user.voices].sort());
    await outboxDrained();

    const { Voice } = await import('../../subgraphs/tts/entities/voice');
    const { Synthesis } = await import('../../subgraphs/tts/entities/synthesis');
    expect(await tts.manager.countBy(Voice, { ownerId: user.id })).toBe(0);
    expect(await tts.manager.countBy(Synthesis, { ownerId: user.id })).toBe(0);
    expect(fs.existsSync(user.audio)).toBe(false);
    // Another user's data is untouched.
    const other = await createUserAndLogin(server.url, adminToken, 'bystander', 'bystander password 1');
    expect(
      (await http.post('/api/v1/tts/voices', { name: 'kept', base_voice: 'f3' }, { token: other.token })).status,
    ).toBe(202);
    // Each process logs what it deleted: the two processes' logs hold at most one such line together.
    const lines = processes.flatMap((p) => p.logs).filter((l) => l.userId === user.id && l.voices !== undefined);
    expect(lines.length).toBeLessThanOrEqual(1);
  }, 120_000);

  // better-sqlite3 waits for a lock synchronously, so two connections of one process would block
  // each other's event loop: on SQLite the race is the processes' of the first test.
  (TEST_DB === 'mysql' ? it : it.skip)(
    'of consumers draining at the same moment on separate connections, exactly one deletes',
    async () => {
      const user = await userWithData('raced', 2);
      // Stop nothing: the three running consumers race these four too.
      const connections = await Promise.all(
        [1, 2, 3, 4].map(() =>
          openDatabase(
            { ...server.config, MIGRATIONS_RUN: false },
            { name: 'tts', entities: ttsSubgraph.entities, migrations: [] },
          ),
        ),
      );
      try {
        const consumers: EventConsumer[] = connections.map((dataSource) =>
          userDeletionConsumer({
            dataSource,
            log,
            store: new DiskAudioStore(audioDir(server.config)),
            // Not started: the consumers only record the job; the running processes' queues do it.
            queue: jobQueue({ config: server.config, dataSource }),
            config: server.config,
          }),
        );
        expect((await http.delete(`/api/v1/admin/users/${user.id}?version=1`, { token: adminToken })).status).toBe(202);
        const deleted = (await audit.waitFor((f) => f.event === 'user.deleted' && f.data.user_id === user.id))[0];
        // Wait until the event is in the log, then let all four drain at once.
        while ((await log.position()).lastSeq < Number(deleted.id)) await new Promise((r) => setTimeout(r, 20));
        await Promise.all(consumers.map((c) => c.drain()));
        await consumedThrough(Number(deleted.id));
        // The cascade's events go through the tts outbox; the relay appends them to the log a moment later.
        await audit.waitFor((f) => f.event === 'voice.deleted' && user.voices.includes(f.data.id), 2, 30_000);
        await outboxDrained();
        const events = await voiceDeletedEvents(user.voices);
        expect(events.map((e) => e.resourceId).sort()).toEqual([...user.voices].sort());
        expect(fs.existsSync(user.audio)).toBe(false);
      } finally {
        await Promise.all(connections.map((c) => c.destroy()));
      }
    },
    120_000,
  );
});
