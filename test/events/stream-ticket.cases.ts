// Stream tickets: how a browser's EventSource, which cannot send a header, opens a stream.
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { Frame, openStream, OpenStream } from '../helpers/sse';
import { decode, serverPrivateKey, signWith } from '../helpers/tokens';

let server: TestServer;
let http: ReturnType<typeof api>;
let admin: Awaited<ReturnType<typeof login>>;
const streams: OpenStream[] = [];

beforeAll(async () => {
  server = await startTestServer();
  http = api(server.url);
  admin = await login(server.url, ADMIN);
});
afterEach(() => streams.splice(0).forEach((s) => s.close()));
afterAll(() => server.close());

async function ticketFor(token: string): Promise<string> {
  const res = await http.post('/api/v1/auth/stream-ticket', undefined, { token });
  expect(res.status).toBe(202);
  return res.body.ticket;
}
async function open(path: string, lastEventId?: string) {
  const s = await openStream(`${server.url}${path}`, { lastEventId });
  streams.push(s);
  return s;
}
const ofType = (type: string) => (f: Frame) => f.event === type;
const EVENTS_SUBSCRIPTION = 'subscription { events { seq type resourceId userId } }';

describe('POST /api/v1/auth/stream-ticket', () => {
  it('answers 202 { ticket, expires_in } with the stream URL as Location, never the ticket; needs a token', async () => {
    const res = await http.post('/api/v1/auth/stream-ticket', undefined, { token: admin.access_token });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ ticket: expect.any(String), expires_in: 30 });
    // A credential has no place in a header that proxies log.
    expect(res.headers.get('location')).toBe('/api/v1/events');
    const claims = decode(res.body.ticket);
    expect(claims).toMatchObject({ typ: 'stream', sid: admin.session_id });
    expect(claims.exp - claims.iat).toBe(30);

    const refused = await http.post('/api/v1/auth/stream-ticket');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('a ticket is not an access token', async () => {
    const ticket = await ticketFor(admin.access_token);
    expect((await http.get('/api/v1/auth/session', { token: ticket })).status).toBe(401);
    expect((await http.graphql('{ me { id } }', {}, ticket)).status).toBe(401);
  });
});

describe('GET /api/v1/events?ticket=…', () => {
  it("opens the caller's stream without a header, once; then resumes with Last-Event-ID like any stream", async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'ticketholder');
    const ticket = await ticketFor(user.token);
    const s = await open(`/api/v1/events?ticket=${ticket}`);
    expect(s.status).toBe(200);
    await http.post('/api/v1/tts/voices', { name: 'Mine', base_voice: 'f1' }, { token: user.token });
    await http.post('/api/v1/tts/voices', { name: 'Not mine', base_voice: 'f1' }, { token: admin.access_token });
    const [created] = await s.waitFor(ofType('voice.created'));
    expect(created.data).toMatchObject({ name: 'Mine', user_id: user.id });

    // Used: refused, on the REST bridge and on /graphql/stream alike.
    const again = await open(`/api/v1/events?ticket=${ticket}`);
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ error: 'unauthorized', message: expect.stringMatching(/used/) });
    expect(again.headers.get('www-authenticate')).toBe('Bearer');
    const viaGraphql = await fetch(
      `${server.url}/graphql/stream?ticket=${ticket}&query=${encodeURIComponent(EVENTS_SUBSCRIPTION)}`,
      { headers: { accept: 'text/event-stream' } },
    );
    expect(viaGraphql.status).toBe(401);
    await viaGraphql.body?.cancel();

    s.close();
    await http.post('/api/v1/tts/voices', { name: 'While away', base_voice: 'f1' }, { token: user.token });
    const resumed = await open(`/api/v1/events?ticket=${await ticketFor(user.token)}`, created.id);
    const [missed] = await resumed.waitFor(ofType('voice.created'));
    expect(missed.data).toMatchObject({ name: 'While away' });
  });

  it('is bound to the session: the stream ends when it is revoked, and its unused tickets stop working', async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'revoked-holder');
    const s = await open(`/api/v1/events?ticket=${await ticketFor(user.token)}`);
    const spare = await ticketFor(user.token);
    expect(s.status).toBe(200);
    await http.post('/api/v1/auth/logout', undefined, { token: user.token });
    await s.waitFor(ofType('session.revoked'));
    await s.ended;
    // The stream saw the revocation, so the event log has it: the spare ticket is refused.
    const refused = await open(`/api/v1/events?ticket=${spare}`);
    expect(refused.status).toBe(401);
    expect(refused.body.message).toMatch(/session has ended/);
  });

  it('an expired, forged or malformed ticket is refused', async () => {
    const claims = decode(admin.access_token);
    const key = serverPrivateKey(server.config.dataDir);
    const base = { sub: claims.sub, sid: claims.sid, roles: claims.roles, typ: 'stream', sxp: claims.exp };
    const expired = signWith(
      key,
      { ...base, iat: Math.floor(Date.now() / 1000) - 60 },
      { expiresIn: 30, issuer: server.config.JWT_ISSUER, jwtid: 'a' },
    );
    const noSessionExpiry = signWith(
      key,
      { ...base, sxp: undefined },
      { expiresIn: 30, issuer: server.config.JWT_ISSUER, jwtid: 'b' },
    );
    const accessAsTicket = admin.access_token;
    for (const ticket of [expired, noSessionExpiry, accessAsTicket]) {
      const res = await open(`/api/v1/events?ticket=${ticket}`);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    }
    const malformed = await open('/api/v1/events?ticket=not-a-ticket');
    expect(malformed.status).toBe(400);
    expect(malformed.body.details).toHaveProperty('ticket');
  });
});

describe('GET /graphql/stream?ticket=…', () => {
  it("runs the events subscription for the ticket's owner, as an EventSource would (GET, no header)", async () => {
    const user = await createUserAndLogin(server.url, admin.access_token, 'graphql-ticket');
    const s = await open(
      `/graphql/stream?ticket=${await ticketFor(user.token)}&query=${encodeURIComponent(EVENTS_SUBSCRIPTION)}`,
    );
    expect(s.status).toBe(200);
    const created = await http.post(
      '/api/v1/tts/voices',
      { name: 'Over GraphQL', base_voice: 'f1' },
      { token: user.token },
    );
    const [next] = await s.waitFor((f) => f.event === 'next' && f.data.data.events.type === 'voice.created');
    expect(next.data.data.events).toMatchObject({ resourceId: created.body.id, userId: user.id });
  });
});
