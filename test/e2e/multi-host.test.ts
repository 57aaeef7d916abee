// Multi-host groundwork (issue 43, item 4): every process with its own DATA_DIR and no shared
// folder, as on hosts that share no disk. Two processes of each subgraph (auth, tts, vault), a
// synthesis worker, two gateways and two facades; facade 1 → gateway 1 → the first replicas,
// facade 2 → gateway 2 → the second. With BLOB_STORE_URL on NATS (a JetStream object store), a
// synthesis rendered by the worker is served by either tts process and a vault file captured
// through one vault process is read through the other; with the object store switched off (files
// under each process's own DATA_DIR) neither can be, which the second run shows.
import crypto from 'node:crypto';
import { loadConfig } from '../../lib/config';
import { api, login } from '../helpers/http';
import { DistributedLayout, startDistributed } from '../helpers/processes';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { until } from '../helpers/wait';

const NATS = process.env.NATS_TEST_URL ?? '127.0.0.1:4222';
// Several processes share one database only on MySQL; SQLite is the one-process default.
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

const keys = crypto.generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

const bucket = `test_multihost_${crypto.randomUUID().slice(0, 8)}`;

onMysql.each([
  { store: 'on', url: `nats://${NATS}/${bucket}` },
  { store: 'off', url: '' },
])('hosts that share no disk, the object store $store', ({ store, url }) => {
  const env: Record<string, string> = {
    ...isolatedEnv(),
    LOG_LEVEL: 'warn',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
    SUBGRAPHS: 'auth,tts,vault',
    // One key pair for every process: without it each would make its own under its DATA_DIR.
    JWT_PRIVATE_KEY: keys.privateKey,
    JWT_PUBLIC_KEY: keys.publicKey,
    BLOB_STORE_URL: url,
  };
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
    if (store === 'on') {
      const { connect } = await import('@nats-io/transport-node');
      const { Objm } = await import('@nats-io/obj');
      const nc = await connect({ servers: NATS });
      await new Objm(nc)
        .open(bucket)
        .then((b) => b.destroy())
        .catch(() => undefined);
      await nc.close();
    }
  }, 60_000);

  it('serves a synthesis rendered by the worker, and a vault file, through the other processes', async () => {
    const [one, two] = layout.facades.map((f) => api(f.url));
    const token = (await login(layout.facades[0].url, ADMIN)).access_token;

    // Speech: requested through facade 1, rendered by the worker process (own folder), served by
    // the second tts process (through facade 2) and by the first (through facade 1).
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
    const audio = (base: string, range: string) =>
      fetch(`${base}/api/v1/tts/syntheses/${id}/audio`, { headers: { authorization: `Bearer ${token}`, range } });

    // The vault: a file captured through facade 1 (the first vault process stores it), read through facade 2.
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

    for (const facade of layout.facades) {
      const res = await audio(facade.url, 'bytes=0-11');
      if (store === 'on') {
        expect(res.status).toBe(206);
        expect(Buffer.from(await res.arrayBuffer()).toString('latin1')).toMatch(/^RIFF....WAVE$/s);
        // A range in the middle of the file.
        const middle = await audio(facade.url, 'bytes=100-199');
        expect(middle.status).toBe(206);
        expect((await middle.arrayBuffer()).byteLength).toBe(100);
      } else {
        // The WAV is in the worker's folder: no tts process can serve it.
        expect(res.status).not.toBe(206);
        await res.arrayBuffer().catch(() => undefined);
      }
    }
    if (store === 'on') {
      // Speech read while the worker still writes it: facade 2's tts process reads the growing
      // object (segments and their manifest) the worker process is appending to in the store.
      const abort = new AbortController();
      const speech = await fetch(`${layout.facades[1].url}/v1/audio/speech`, {
        method: 'POST',
        signal: abort.signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          model: 'tts-1',
          voice: 'alloy',
          response_format: 'pcm',
          input: 'A long text, streamed from another host while it renders. '.repeat(150),
        }),
      });
      expect(speech.status).toBe(200);
      const speechId = speech.headers.get('x-synthesis-id')!;
      expect((await speech.body!.getReader().read()).value!.length).toBeGreaterThan(0);
      expect((await one.get(`/api/v1/tts/syntheses/${speechId}`, { token })).body.state).toBe('running');
      abort.abort();
    }
    const other = await content(layout.facades[1].url);
    if (store === 'on') {
      expect(other.status).toBe(200);
      expect(Buffer.from(await other.arrayBuffer())).toEqual(bytes);
    } else {
      // Stored under the first vault process's folder: the second has no such file.
      expect(other.status).not.toBe(200);
      await other.arrayBuffer().catch(() => undefined);
      const same = await content(layout.facades[0].url);
      expect(same.status).toBe(200);
      expect(Buffer.from(await same.arrayBuffer())).toEqual(bytes);
    }
  }, 180_000);
});
