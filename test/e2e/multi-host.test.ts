// The multi-host layout (issue 43, item 4), as hosts that share no disk: every subgraph (auth,
// tts, notes, vault, hubs, integrations) in two processes, two workers, two gateways and two
// facades, each process with its own DATA_DIR; facade 1 → gateway 1 → the first replicas,
// facade 2 → gateway 2 → the second. The event log (EVENT_LOG_URL) and the files (BLOB_STORE_URL)
// are on NATS JetStream, the modules' data on MySQL, DATABASE_POOL_SIZE=2 per process. One layout
// serves the file's cases in turn: the flow through either facade; an integrations process
// SIGKILLed mid-flow; JetStream stopped mid-run and started again (a NATS server of the test's
// own, so the machine's shared one is left alone). The last describe runs a smaller layout with
// the object store switched off, where the files cannot be served by the other processes.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadConfig } from '../../lib/config';
import { api, login } from '../helpers/http';
import { natsServerBinary, OwnNatsServer, startNatsServer } from '../helpers/nats-server';
import { DistributedLayout, startDistributed } from '../helpers/processes';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { Frame, openStream, OpenStream } from '../helpers/sse';
import { until } from '../helpers/wait';

// Several processes share one database only on MySQL; SQLite is the one-process default.
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;
const NATS_BIN = natsServerBinary();
// The whole layout needs a NATS server it may stop: `nats-server` installed (CI's image has it).
const withOwnNats = TEST_DB === 'mysql' && NATS_BIN ? describe : describe.skip;

const keys = crypto.generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

/** The environment every process of a layout shares. */
function layoutEnv(extra: Record<string, string>): Record<string, string> {
  return {
    ...isolatedEnv(),
    LOG_LEVEL: 'warn',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
    // One key pair for every process: without it each would make its own under its DATA_DIR.
    JWT_PRIVATE_KEY: keys.privateKey,
    JWT_PUBLIC_KEY: keys.publicKey,
    DATABASE_POOL_SIZE: '2',
    ...extra,
  };
}

withOwnNats('the multi-host layout: every subgraph twice, JetStream event log and object store', () => {
  let nats: OwnNatsServer;
  let env: Record<string, string>;
  let layout: DistributedLayout;
  let token = '';
  let events: OpenStream | undefined;
  const arrivals = new Map<string, string[]>(); // voice id → webhook-ids received
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
      arrivals.set(body.id, [...(arrivals.get(body.id) ?? []), String(req.headers['webhook-id'])]);
      res.writeHead(204).end();
    });
  });
  const facade = (i: number) => api(layout.facades[i].url);
  const createVoice = async (i: number, name: string) => {
    const res = await facade(i).post('/api/v1/tts/voices', { name, base_voice: 'f1' }, { token });
    expect(res.status).toBe(202);
    return res.body.id as string;
  };

  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const base = isolatedEnv();
    nats = await startNatsServer(NATS_BIN!, path.join(base.DATA_DIR, 'nats'));
    env = layoutEnv({
      ...base,
      EVENT_LOG_URL: `nats://${nats.address}`,
      EVENT_LOG_STREAM: `M${crypto.randomBytes(6).toString('hex')}`,
      BLOB_STORE_URL: `nats://${nats.address}/multihost`,
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      // A dead process's leases end soon, so the survivors take its work over within the test.
      WEBHOOK_LEASE_SECONDS: '3',
      SYNTHESIS_LEASE_SECONDS: '5',
      VAULT_ENRICH_LEASE_SECONDS: '5',
      JOBS_LEASE_SECONDS: '3',
    });
    layout = await startDistributed(env, {
      gateways: 2,
      facades: 2,
      workers: 2,
      replicas: 2,
      ownDataDirs: true,
      pinned: true,
    });
    token = (await login(layout.facades[0].url, ADMIN)).access_token;
    // The receiver's webhook, for every voice.created (the last two cases count its arrivals).
    const hook = await facade(1).post(
      '/api/v1/integrations/webhooks',
      { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, event_types: ['voice.created'] },
      { token },
    );
    if (hook.status !== 202) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  }, 420_000);

  afterAll(async () => {
    events?.close();
    await layout?.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await nats?.stop();
    if (env) await cleanupDatabases(loadConfig(env));
  }, 90_000);

  it('logs in through either facade and runs every subgraph on each side', async () => {
    expect(layout.subgraphs.map((p) => p.name).sort()).toEqual(
      ['auth', 'hubs', 'integrations', 'notes', 'transfer', 'tts', 'vault'].flatMap((n) => [
        `subgraph ${n} 1`,
        `subgraph ${n} 2`,
      ]),
    );
    for (const i of [0, 1]) {
      const other = (await login(layout.facades[i].url, ADMIN)).access_token;
      expect((await facade(1 - i).get('/api/v1/auth/me', { token: other })).status).toBe(200);
      const note = await facade(i).post(
        '/api/v1/notes',
        { title: `host ${i}`, body: 'written on one side' },
        { token },
      );
      expect(note.status).toBe(202);
      expect((await facade(1 - i).get(`/api/v1/notes/${note.body.id}`, { token })).body.title).toBe(`host ${i}`);
      expect((await facade(i).get('/health/ready')).status).toBe(200);
    }
  }, 60_000);

  it('serves a synthesis rendered by a worker through the other tts process, every format and Range', async () => {
    const synthesis = await facade(0).post(
      '/api/v1/tts/syntheses',
      { text: 'Rendered on one host, served from another.', base_voice: 'f2' },
      { token },
    );
    expect(synthesis.status).toBe(202);
    const id = synthesis.body.id as string;
    await until(
      async () => (await facade(1).get(`/api/v1/tts/syntheses/${id}`, { token })).body?.state === 'succeeded',
      'the synthesis to succeed',
      90_000,
      200,
    );
    // Rendered by a worker: no tts process rendered anything (they run with SYNTHESIS_CONCURRENCY=0).
    const audio = (i: number, format: string, range?: string) =>
      fetch(`${layout.facades[i].url}/api/v1/tts/syntheses/${id}/audio?format=${format}`, {
        headers: { authorization: `Bearer ${token}`, ...(range ? { range } : {}) },
        // A stalled answer fails naming its format instead of running into the case's timeout.
        signal: AbortSignal.timeout(45_000),
      }).catch((err: unknown) => {
        throw new Error(`${format} ${range ?? 'whole'} through facade ${i + 1}: ${String(err)}`);
      });
    const signatures: Record<string, RegExp> = {
      wav: /^RIFF....WAVE/s,
      pcm: /^/,
      mp3: /^(ID3|\xff[\xe0-\xff])/s,
      opus: /^OggS/,
      flac: /^fLaC/,
    };
    for (const [format, signature] of Object.entries(signatures)) {
      // The whole file through facade 2 (the second tts process): for mp3, opus and flac that
      // process encodes it from the WAV in the store and keeps the encoding there.
      const whole = await audio(1, format);
      expect([format, whole.status]).toEqual([format, 200]);
      const bytes = Buffer.from(
        await whole.arrayBuffer().catch((err: unknown) => {
          throw new Error(`${format} whole through facade 2, reading the body: ${String(err)}`);
        }),
      );
      expect(bytes.length).toBeGreaterThan(100);
      expect(bytes.subarray(0, 12).toString('latin1')).toMatch(signature);
      // A range through facade 1 (the first tts process): for an encoding, the one the other
      // process kept in the object store (once it is whole there).
      const range = await until(
        async () => {
          const res = await audio(0, format, 'bytes=10-59');
          if (res.status === 206) return res;
          await res.arrayBuffer().catch(() => undefined);
          return undefined;
        },
        `a ${format} range through the first tts process`,
        30_000,
        200,
      );
      expect(range.headers.get('content-range')).toMatch(/^bytes 10-59\/\d+$/);
      const piece = Buffer.from(
        await range.arrayBuffer().catch((err: unknown) => {
          throw new Error(`${format} range through facade 1, reading the body: ${String(err)}`);
        }),
      );
      expect(piece.length).toBe(50);
      // WAV and PCM are the stored file itself; an encoding streamed while made may differ from the
      // kept one in its header (sizes written at the end), not in length.
      if (format === 'wav' || format === 'pcm') expect(piece).toEqual(bytes.subarray(10, 60));
    }
  }, 240_000);

  it('reads a vault file captured through one vault process through the other', async () => {
    const bytes = Buffer.from(`a file captured on one host ${crypto.randomUUID()}`);
    const captured = await facade(0).post(
      '/api/v1/vault/items',
      { file: { name: 'hosts.txt', content_base64: bytes.toString('base64') } },
      { token },
    );
    expect(captured.status).toBe(202);
    for (const i of [1, 0]) {
      const res = await fetch(`${layout.facades[i].url}/api/v1/vault/items/${captured.body.id}/content`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    }
    await until(
      async () => (await facade(1).get(`/api/v1/vault/items/${captured.body.id}`, { token })).body?.state === 'ready',
      'the file enriched',
      60_000,
      200,
    );
  }, 120_000);

  it('runs the hub quick-add saga across the processes, once', async () => {
    const hub = await facade(0).post('/api/v1/hubs', { name: 'multi-host saga' }, { token });
    expect(hub.status).toBe(202);
    const added = await facade(1).post(
      `/api/v1/hubs/${hub.body.id}/quick-add`,
      { text: `captured across hosts ${crypto.randomUUID()}`, capture: true },
      { token },
    );
    expect(added.status).toBe(202);
    const node = await until(
      async () => {
        const got = await facade(0).get(`/api/v1/hubs/${hub.body.id}`, { token });
        const found = (got.body?.nodes ?? []).find((n: any) => n.id === added.body.id);
        return found?.type === 'vault_item' && found.ref_id ? found : undefined;
      },
      'the quick-added node to become a vault item node',
      60_000,
      200,
    );
    expect((await facade(1).get(`/api/v1/vault/items/${node.ref_id}`, { token })).status).toBe(200);
    // Exactly one item for the node: the capture keyed by the node id.
    const items = await facade(1).get('/api/v1/vault/items?limit=100', { token });
    const forNode = (items.body.items as any[]).filter(
      (it) => it.source?.node_id === added.body.id || it.id === node.ref_id,
    );
    expect(forNode.map((it) => it.id)).toEqual([node.ref_id]);
  }, 120_000);

  it('delivers webhooks once and resumes the event stream on the other facade, an integrations process SIGKILLed mid-flow', async () => {
    events = await openStream(`${layout.facades[0].url}/api/v1/events`, { token });
    expect(events.status).toBe(200);
    const voices: string[] = [];
    for (let n = 0; n < 4; n++) voices.push(await createVoice(n % 2, `hosts ${n}`));
    await until(() => arrivals.size >= 1, 'a first delivery', 30_000);
    await events.waitFor((f) => f.event === 'voice.created' && voices.includes(f.data.id), 1, 20_000);

    // The first integrations process dies mid-flow (its fan-out and deliveries with it); voices
    // keep coming through both facades, and the second integrations process takes over.
    const integrations = layout.subgraphs.find((p) => p.name === 'subgraph integrations 1')!;
    const killing = integrations.kill('SIGKILL');
    for (let n = 4; n < 8; n++) voices.push(await createVoice(n % 2, `hosts ${n}`));
    await killing;
    // The stream is left on facade 1 and resumed on facade 2 from the last event received.
    const before: Frame[] = [...events.frames];
    events.close();
    events = await openStream(`${layout.facades[1].url}/api/v1/events`, {
      token,
      lastEventId: before[before.length - 1].id,
    });
    expect(events.status).toBe(200);
    for (let n = 8; n < 12; n++) voices.push(await createVoice(n % 2, `hosts ${n}`));
    await until(() => voices.every((v) => arrivals.has(v)), 'every voice delivered', 90_000, 100);
    // Only a delivery in flight at the kill may arrive twice, with the same webhook-id.
    const twice = voices.filter((v) => arrivals.get(v)!.length > 1);
    expect(twice.length).toBeLessThanOrEqual(1);
    for (const v of twice) expect(new Set(arrivals.get(v)).size).toBe(1);

    const last = voices[voices.length - 1];
    await events.waitFor((f) => f.event === 'voice.created' && f.data.id === last, 1, 30_000);
    const frames = [...before, ...events.frames];
    const ids = frames.map((f) => Number(f.id));
    expect(new Set(ids).size).toBe(ids.length); // nothing seen twice across the two facades
    const created = frames.filter((f) => f.event === 'voice.created').map((f) => f.data.id as string);
    for (const v of voices) expect([v, created.filter((c) => c === v).length]).toEqual([v, 1]);
  }, 240_000);

  it('JetStream stopped mid-flow: unverifiable requests are 503, and every acknowledged voice arrives once when it is back', async () => {
    const stream = await openStream(`${layout.facades[1].url}/api/v1/events`, { token });
    expect(stream.status).toBe(200);
    const marker = await createVoice(1, 'before the outage');
    const [from] = await stream.waitFor((f) => f.event === 'voice.created' && f.data.id === marker, 1, 30_000);
    stream.close();
    await until(() => arrivals.has(marker), 'the marker voice delivered', 30_000);

    // Voices created through both facades while the NATS server is killed (SIGKILL, as a host
    // lost) under them, then more once it is gone. An acknowledged (202) one has its row and its
    // outbox row in MySQL; the others were refused: 503 (the session's revocations cannot be read
    // from the log), never 500.
    const answers: { status: number; id?: string }[] = [];
    const send = async (i: number, name: string) => {
      const res = await facade(i).post('/api/v1/tts/voices', { name, base_voice: 'f1' }, { token });
      answers.push({ status: res.status, id: res.body?.id });
    };
    const during = Array.from({ length: 6 }, (_, n) => send(n % 2, `outage ${n}`));
    await nats.stop();
    await Promise.all(during);
    for (let n = 6; n < 8; n++) await send(n % 2, `outage ${n}`);
    expect(answers.filter((a) => a.status !== 202 && a.status !== 503)).toEqual([]);
    expect(answers[answers.length - 1].status).toBe(503);
    // Readiness says so: the event log is down on every process that reads it.
    const down = await facade(1).get('/health/ready');
    expect([down.status, down.body.checks.events]).toEqual([503, 'down']);

    // Back on the same port and store (the stream and its dedup state kept on disk).
    await nats.start();
    let lastReady: unknown;
    await until(
      async () => {
        // Facade 1's side lacks the integrations process killed in the previous case (its gateway
        // routes to it alone): there only the event log's check is asked for.
        const ready = await Promise.all([0, 1].map((i) => facade(i).get('/health/ready')));
        lastReady = ready.map((r) => r.body);
        return ready[0].body?.checks?.events === 'up' && ready[1].status === 200;
      },
      'both facades ready again',
      60_000,
      250,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${JSON.stringify(lastReady)}`);
    });
    const voices = answers.filter((a) => a.status === 202).map((a) => a.id!);
    for (let n = 0; n < 2; n++) voices.push(await createVoice(n % 2, `after the outage ${n}`));
    await until(() => voices.every((v) => arrivals.has(v)), 'every acknowledged voice delivered', 90_000, 100);
    // At least once: only a delivery in flight at the stop may arrive again, with the same webhook-id.
    const twice = voices.filter((v) => arrivals.get(v)!.length > 1);
    expect(twice.length).toBeLessThanOrEqual(1);
    for (const v of twice) expect(new Set(arrivals.get(v)).size).toBe(1);
    // Read from before the outage, through the other facade: each acknowledged voice once.
    const after = await openStream(`${layout.facades[0].url}/api/v1/events`, { token, lastEventId: from.id });
    expect(after.status).toBe(200);
    await after.waitFor((f) => f.event === 'voice.created' && voices.includes(f.data.id), voices.length, 30_000);
    after.close();
    const created = after.frames.filter((f) => f.event === 'voice.created').map((f) => f.data.id as string);
    for (const v of voices) expect([v, created.filter((c) => c === v).length]).toEqual([v, 1]);
  }, 240_000);
});

// The object store switched off: files under each process's own DATA_DIR. A synthesis rendered
// by the worker cannot be served by a tts process, nor a vault file read through the other vault
// process: the whole layout above depends on BLOB_STORE_URL.
onMysql('hosts that share no disk, the object store off', () => {
  const env = layoutEnv({ SUBGRAPHS: 'auth,tts,vault', BLOB_STORE_URL: '' });
  let layout: DistributedLayout;

  beforeAll(async () => {
    layout = await startDistributed(env, {
      gateways: 2,
      facades: 2,
      workers: 1,
      replicas: 2,
      ownDataDirs: true,
      pinned: true,
    });
  }, 240_000);

  afterAll(async () => {
    await layout?.stop();
    await cleanupDatabases(loadConfig(env));
  }, 60_000);

  it('cannot serve a synthesis rendered by the worker, nor a vault file, through the other processes', async () => {
    const [one, two] = layout.facades.map((f) => api(f.url));
    const token = (await login(layout.facades[0].url, ADMIN)).access_token;
    const synthesis = await one.post(
      '/api/v1/tts/syntheses',
      { text: 'Rendered on one host, served from another.', base_voice: 'f2' },
      { token },
    );
    expect(synthesis.status).toBe(202);
    const id = synthesis.body.id as string;
    await until(
      async () => (await two.get(`/api/v1/tts/syntheses/${id}`, { token })).body?.state === 'succeeded',
      'the synthesis to succeed',
      60_000,
    );
    for (const facade of layout.facades) {
      const res = await fetch(`${facade.url}/api/v1/tts/syntheses/${id}/audio`, {
        headers: { authorization: `Bearer ${token}`, range: 'bytes=0-11' },
      });
      // The WAV is in the worker's folder: no tts process can serve it.
      expect(res.status).not.toBe(206);
      await res.arrayBuffer().catch(() => undefined);
    }
    const bytes = Buffer.from(`a file captured on one host ${crypto.randomUUID()}`);
    const captured = await one.post(
      '/api/v1/vault/items',
      { file: { name: 'hosts.txt', content_base64: bytes.toString('base64') } },
      { token },
    );
    expect(captured.status).toBe(202);
    const content = (base: string) =>
      fetch(`${base}/api/v1/vault/items/${captured.body.id}/content`, {
        headers: { authorization: `Bearer ${token}` },
      });
    // Stored under the first vault process's folder: the second has no such file.
    const other = await content(layout.facades[1].url);
    expect(other.status).not.toBe(200);
    await other.arrayBuffer().catch(() => undefined);
    const same = await content(layout.facades[0].url);
    expect(same.status).toBe(200);
    expect(Buffer.from(await same.arrayBuffer())).toEqual(bytes);
  }, 180_000);
});
