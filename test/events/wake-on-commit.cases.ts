// Within one process a commit wakes what reads it, on SQLite and MySQL alike: the outbox relay
// after a subgraph's transaction, the event stream and the event consumers after the relay's
// append. Polling is only for other processes' writes, and backs off to POLL_MAX_IDLE_MS while
// nothing happens: with polls 10 s apart here, everything below arrives only by being woken.
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { Frame, openStream, OpenStream } from '../helpers/sse';

const SOON_MS = 3000;

let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;
let audit: OpenStream;

beforeAll(async () => {
  server = await startTestServer({ EVENT_POLL_MS: '10000', POLL_MAX_IDLE_MS: '10000', SYNTHESIS_POLL_MS: '10000' });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
  audit = await openStream(`${server.url}/api/v1/events?scope=all`, { token: adminToken });
});
afterAll(async () => {
  audit?.close();
  await server.close();
});

const is = (type: string, resourceId: string) => (f: Frame) => f.event === type && f.data.id === resourceId;

it("a subgraph's commit reaches the event stream at once, through its relay and the log", async () => {
  const user = await createUserAndLogin(server.url, adminToken, 'woken');
  const created = await http.post('/api/v1/tts/voices', { name: 'Woken', base_voice: 'f1' }, { token: user.token });
  expect(created.status).toBe(202);
  await audit.waitFor(is('voice.created', created.body.id), 1, SOON_MS);
});

it("the log's append wakes the event consumers: a deleted user's voices go at once", async () => {
  const user = await createUserAndLogin(server.url, adminToken, 'cascaded');
  const created = await http.post('/api/v1/tts/voices', { name: 'Cascaded', base_voice: 'f1' }, { token: user.token });
  expect((await http.delete(`/api/v1/admin/users/${user.id}?version=1`, { token: adminToken })).status).toBe(202);
  // The tts consumer deletes the voice on user.deleted and records voice.deleted.
  const [deleted] = await audit.waitFor(is('voice.deleted', created.body.id), 1, SOON_MS);
  expect(deleted.data.reason).toBe('user_deleted');
});
