// The one-process server with EVENT_LOG_URL set: the event log is a JetStream stream. Polls are
// 10 s apart here, so what arrives soon arrives through the relay's publish, the stream, the
// NATS wake-up of the event stream, and the durable consumers; SSE ids are stream sequences and
// Last-Event-ID resumes from them.
import crypto from 'node:crypto';
import { natsServers } from '../../lib/event-backends';
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { Frame, openStream, OpenStream } from '../helpers/sse';

const NATS_TEST_URL = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';
const stream = `S${crypto.randomBytes(6).toString('hex')}`;
const SOON_MS = 5000;

let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;
const streams: OpenStream[] = [];

beforeAll(async () => {
  server = await startTestServer({
    EVENT_LOG_URL: NATS_TEST_URL,
    EVENT_LOG_STREAM: stream,
    EVENT_POLL_MS: '10000',
    POLL_MAX_IDLE_MS: '10000',
    SYNTHESIS_POLL_MS: '10000',
  });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
});
afterAll(async () => {
  streams.forEach((s) => s.close());
  await server?.close();
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: natsServers(NATS_TEST_URL) });
  await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
  await nc.close();
});

const is = (type: string, resourceId: string) => (f: Frame) => f.event === type && f.data.id === resourceId;
async function open(query: string, token: string, lastEventId?: string) {
  const s = await openStream(`${server.url}/api/v1/events${query}`, { token, lastEventId });
  streams.push(s);
  return s;
}

it('a commit reaches the event stream through the stream, with stream sequences as ids, and resumes', async () => {
  const audit = await open('?scope=all', adminToken);
  const user = await createUserAndLogin(server.url, adminToken, 'jetstreamed');
  const created = await http.post('/api/v1/tts/voices', { name: 'Streamed', base_voice: 'f1' }, { token: user.token });
  expect(created.status).toBe(202);
  const [frame] = await audit.waitFor(is('voice.created', created.body.id), 1, SOON_MS);
  expect(Number(frame.id)).toBeGreaterThan(0);
  // Resume from just before it: the same event again, same id.
  const resumed = await open('?scope=all', adminToken, String(Number(frame.id) - 1));
  const [again] = await resumed.waitFor(is('voice.created', created.body.id), 1, SOON_MS);
  expect(again.id).toBe(frame.id);
});

it("the durable consumers follow the stream: a deleted user's voices go at once", async () => {
  const audit = await open('?scope=all', adminToken);
  const user = await createUserAndLogin(server.url, adminToken, 'cascaded-js');
  const created = await http.post('/api/v1/tts/voices', { name: 'Cascaded', base_voice: 'f1' }, { token: user.token });
  expect((await http.delete(`/api/v1/admin/users/${user.id}?version=1`, { token: adminToken })).status).toBe(202);
  const [deleted] = await audit.waitFor(is('voice.deleted', created.body.id), 1, SOON_MS);
  expect(deleted.data.reason).toBe('user_deleted');
});
