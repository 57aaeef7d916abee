// The distributed layout as real processes on one MySQL: each subgraph, a synthesis worker, two
// gateways and two facades. The login → session → voice create → delete → events flow alternates between the
// facades; one gateway and one facade are killed mid-run; the rest keep answering and
// nothing that was acknowledged is lost.
import crypto from 'node:crypto';
import { DistributedLayout, ServiceProcess, startDistributed } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { natsServers } from '../../lib/event-backends';
import { api, login } from '../helpers/http';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { openStream, OpenStream } from '../helpers/sse';
import { until } from '../helpers/wait';

// Several processes share one database only on MySQL; SQLite is the one-process default.
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

// The event log in the `events` table, and on NATS JetStream (EVENT_LOG_URL, a stream of this run's own).
const NATS_TEST_URL = process.env.NATS_TEST_URL ?? 'nats://127.0.0.1:4222';
const eventLogs: [string, Record<string, string>][] = [
  ['table', {}],
  ['JetStream', { EVENT_LOG_URL: NATS_TEST_URL, EVENT_LOG_STREAM: `D${crypto.randomBytes(6).toString('hex')}` }],
];

onMysql.each(eventLogs)('distributed mode as separate processes (%s event log)', (_kind, eventLog) => {
  // Many logins from one address: lift the per-address limit, which has its own tests.
  const env = {
    ...isolatedEnv(),
    ...eventLog,
    LOG_LEVEL: 'info',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
  };
  let layout: DistributedLayout;
  let events: OpenStream | undefined;

  beforeAll(async () => {
    layout = await startDistributed(env, { gateways: 2, facades: 2, workers: 1 });
  }, 120_000);

  afterAll(async () => {
    events?.close();
    await layout?.stop();
    await cleanupDatabases(loadConfig(env));
    if (eventLog.EVENT_LOG_STREAM) {
      const { connect } = await import('@nats-io/transport-node');
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const nc = await connect({ servers: natsServers(NATS_TEST_URL) });
      await (await jetstreamManager(nc)).streams.delete(eventLog.EVENT_LOG_STREAM).catch(() => undefined);
      await nc.close();
    }
  }, 60_000);

  it('serves the flow through either facade, survives losing a gateway and a facade, and loses nothing acknowledged', async () => {
    let { facades } = layout;
    const { gateways, subgraphs } = layout;
    const via = (i: number) => api(facades[i % facades.length].url);
    const tokens = await login(facades[0].url, ADMIN);
    const token = tokens.access_token;

    // One request id through every hop.
    const requestId = `e2e-${crypto.randomUUID()}`;
    const traced = await via(1).get('/api/v1/auth/session', { token, headers: { 'x-request-id': requestId } });
    expect(traced.status).toBe(200);
    expect(traced.headers.get('x-request-id')).toBe(requestId);
    const logged = (p: ServiceProcess) => p.logs.some((l) => JSON.stringify(l).includes(requestId));
    // Each process writes its line after answering: waited for, not slept for.
    await until(
      () => logged(facades[1]) && gateways.some(logged) && subgraphs.some(logged),
      'the request id in the facade, gateway and subgraph logs',
      10_000,
    ).catch(() => undefined);
    expect(logged(facades[1])).toBe(true);
    expect(gateways.some(logged)).toBe(true);
    expect(subgraphs.some(logged)).toBe(true);

    // The event stream through facade 2, the one that survives.
    events = await openStream(`${facades[1].url}/api/v1/events`, { token });
    expect(events.status).toBe(200);

    // Sessions and voices made alternately through both facades, each read back and deleted through the other.
    const sessions: string[] = [];
    const voices: string[] = [];
    const round = async (i: number, deleteIt: boolean) => {
      const session = await via(i).post('/api/v1/auth/login', ADMIN);
      expect(session.status).toBe(202);
      sessions.push(session.body.session_id);
      expect(
        (await via(i + 1).get(`/api/v1/auth/session/${session.body.session_id}`, { token: session.body.access_token }))
          .status,
      ).toBe(200);
      const voice = await via(i).post(
        '/api/v1/tts/voices',
        { name: `e2e ${crypto.randomUUID()}`, base_voice: 'f3' },
        { token },
      );
      expect(voice.status).toBe(202);
      expect((await via(i + 1).get(`/api/v1/tts/voices/${voice.body.id}`, { token })).body.version).toBe(1);
      if (deleteIt)
        expect((await via(i + 1).delete(`/api/v1/tts/voices/${voice.body.id}?version=1`, { token })).status).toBe(202);
      else voices.push(voice.body.id);
      return voice.body.id as string;
    };
    const deleted: string[] = [];
    for (let i = 0; i < 4; i++) deleted.push(await round(i, true));
    for (const id of deleted) {
      await events.waitFor((f) => f.event === 'voice.created' && f.data.id === id);
      await events.waitFor((f) => f.event === 'voice.deleted' && f.data.id === id);
    }

    // Speech: requested through one facade, rendered by the worker process (the tts subgraph
    // runs with SYNTHESIS_CONCURRENCY=0), downloaded in a
    // byte range through the other facade (pieces over the gateway's HTTP hop).
    const synthesis = await via(0).post(
      '/api/v1/tts/syntheses',
      { text: 'Rendered by a worker of its own.', base_voice: 'f2' },
      { token },
    );
    expect(synthesis.status).toBe(202);
    await events.waitFor((f) => f.event === 'synthesis.succeeded' && f.data.id === synthesis.body.id, 1, 20_000);
    const audio = await fetch(`${facades[1].url}/api/v1/tts/syntheses/${synthesis.body.id}/audio`, {
      headers: { authorization: `Bearer ${token}`, range: 'bytes=0-11' },
    });
    expect(audio.status).toBe(206);
    expect(Buffer.from(await audio.arrayBuffer()).toString('latin1')).toMatch(/^RIFF....WAVE$/s);

    // OpenAI-style speech streams across the processes too: facade 2 reads, over the gateway's
    // HTTP hop, the WAV the worker process is still writing in the shared audio folder; the
    // first bytes come while the synthesis runs. Hanging up cancels it, and the worker stops.
    const abort = new AbortController();
    const speech = await fetch(`${facades[1].url}/v1/audio/speech`, {
      method: 'POST',
      signal: abort.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        model: 'tts-1',
        voice: 'alloy',
        response_format: 'pcm',
        input: 'A long text, streamed from another process while it renders. '.repeat(150),
      }),
    });
    expect(speech.status).toBe(200);
    const speechId = speech.headers.get('x-synthesis-id')!;
    expect((await speech.body!.getReader().read()).value!.length).toBeGreaterThan(0);
    expect((await via(0).get(`/api/v1/tts/syntheses/${speechId}`, { token })).body.state).toBe('running');
    abort.abort();
    await events.waitFor((f) => f.event === 'synthesis.canceled' && f.data.id === speechId, 1, 20_000);
    const stopped = () =>
      layout.workers[0].logs.some((l) => l.synthesisId === speechId && /rendering stopped/.test(String(l.msg)));
    for (const deadline = Date.now() + 20_000; !stopped() && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 50));
    expect(stopped()).toBe(true);

    // Traffic through both facades while gateway 1 and facade 1 die without warning. A
    // request caught in a dying process may fail (it was never acknowledged); none may 500.
    let stop = false;
    let killedAt = Infinity;
    const statuses: number[] = [];
    const afterKill: number[] = []; // facade 2's answers to requests sent once the kill had settled
    const survivorErrors: string[] = [];
    const answeredBy = [0, 0];
    const traffic = [0, 1].map(async (facade) => {
      const target = facades[facade].url;
      for (let n = 0; !stop; n++) {
        const sentAt = Date.now();
        // Not `instanceof Error`: fetch's errors come from outside jest's sandbox, whose Error differs.
        const res = await api(target)
          .post('/api/v1/tts/voices', { name: `kill ${facade} ${n}`, base_voice: 'm3' }, { token })
          .catch((err: unknown) => ({ failed: String(err) }));
        if ('failed' in res) {
          if (facade === 0) return; // its process is gone
          survivorErrors.push(res.failed); // the facade that lives must keep answering
          continue;
        }
        statuses.push(res.status);
        answeredBy[facade]++;
        if (facade === 1 && sentAt > killedAt + 500) afterKill.push(res.status);
        if (res.status === 202) voices.push(res.body.id);
      }
    });
    // Both facades are serving the traffic before the kill (waited for, not a fixed 500 ms).
    await until(() => answeredBy.every((n) => n >= 2), 'traffic answered through both facades');
    await Promise.all([gateways[0].kill('SIGKILL'), facades[0].kill('SIGKILL')]);
    killedAt = Date.now();
    // Traffic goes on until facade 2 has answered 5 requests sent after the kill settled.
    const deadline = Date.now() + 30_000;
    while (afterKill.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    stop = true;
    await Promise.all(traffic);
    expect(survivorErrors).toStrictEqual([]);
    expect(statuses.filter((s) => s !== 202 && s !== 503)).toStrictEqual([]);
    // A request caught in the dying gateway may be 503; once it is gone, every one succeeds.
    expect(afterKill.length).toBeGreaterThanOrEqual(5);
    expect(afterKill).toStrictEqual(afterKill.map(() => 202));
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(5);

    // Facade 2 falls back on gateway 2 for good.
    facades = [facades[1]];
    for (let i = 0; i < 3; i++) await round(0, false);

    // Everything acknowledged is there.
    for (const id of sessions) {
      const session = await via(0).get(`/api/v1/auth/session/${id}`, { token });
      expect(session.status).toBe(200);
      expect(session.body.state).toBe('active');
    }
    for (const id of voices) expect((await via(0).get(`/api/v1/tts/voices/${id}`, { token })).status).toBe(200);

    // The stream may have run through the gateway that died; like EventSource, resume from the
    // last event received, and every acknowledged voice has its event, once.
    const before = events.frames;
    events.close();
    events = await openStream(`${facades[0].url}/api/v1/events`, { token, lastEventId: before[before.length - 1].id });
    const newest = voices[voices.length - 1];
    await events.waitFor((f) => f.event === 'voice.created' && f.data.id === newest, 1, 10_000);
    const after = events.frames;
    const ids = [...before, ...events.frames].map((f) => Number(f.id));
    expect(new Set(ids).size).toBe(ids.length);
    // Each acknowledged voice has exactly one voice.created: the same event appended twice would
    // have two positions and show here twice.
    const createdCount = new Map<string, number>();
    for (const f of [...before, ...after])
      if (f.event === 'voice.created') createdCount.set(f.data.id, (createdCount.get(f.data.id) ?? 0) + 1);
    for (const id of [...deleted, ...voices]) expect([id, createdCount.get(id)]).toEqual([id, 1]);
    expect([...createdCount.values()].every((c) => c === 1)).toBe(true);
    expect((await via(0).get('/health/ready')).status).toBe(200);
  }, 120_000);

  it('stops each process gracefully on SIGTERM', async () => {
    const alive = layout.all;
    const started = Date.now();
    await Promise.all(alive.map((p) => p.kill('SIGTERM')));
    expect(Date.now() - started).toBeLessThan(15_000);
    // The two killed with SIGKILL earlier end by signal; every other exits with 0.
    const codes = await Promise.all(alive.map((p) => p.exited));
    expect(codes.filter((c) => c === 0).length).toBe(alive.length - 2);
  }, 30_000);
});
