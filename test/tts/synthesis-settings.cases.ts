// A synthesis keeps the settings it was queued with: its voice deleted before it renders does
// not change what is rendered. The server renders nothing itself (SYNTHESIS_CONCURRENCY=0), so
// the job is certain to render after the delete, by a worker this test starts on the same
// database. On SQLite and on MySQL.
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../lib/database/open';
import { createLogger } from '../../lib/logger';
import { ttsSubgraph } from '../../subgraphs/tts';
import { DiskAudioStore } from '../../subgraphs/tts/audio/audio-store';
import { EspeakEngine } from '../../subgraphs/tts/engine/espeak';
import { SynthesisWorker } from '../../subgraphs/tts/synthesis-worker';
import { medianPitch, parseWav } from '../helpers/audio';
import { api, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';
import { audioDir } from '../../subgraphs/tts/settings';

let server: TestServer;
let db: DataSource;
let engine: EspeakEngine;
let worker: SynthesisWorker | undefined;

beforeAll(async () => {
  server = await startTestServer({ SYNTHESIS_CONCURRENCY: '0' });
  db = await openDatabase(server.config, {
    name: 'tts',
    entities: ttsSubgraph.entities,
    migrations: ttsSubgraph.migrations,
  });
  engine = new EspeakEngine(1);
});
afterAll(async () => {
  await worker?.stop();
  await engine?.stop();
  await db?.destroy();
  await server?.close();
});

it('renders a synthesis with the settings of its voice when requested, though the voice was deleted before it rendered', async () => {
  const http = api(server.url);
  const { access_token: token } = await login(server.url, ADMIN);
  const settings = { base_voice: 'm3', voice_blend: 'm3(2)+f3', language: 'en-gb', speed: 1.5 };
  const text = 'Settings are copied into the job when it is requested.';
  const voice = await http.post('/api/v1/tts/voices', { name: 'short-lived', ...settings }, { token });
  expect(voice.status).toBe(202);
  const viaVoice = await http.post('/api/v1/tts/syntheses', { text, voice_id: voice.body.id }, { token });
  const inline = await http.post('/api/v1/tts/syntheses', { text, ...settings }, { token });
  const plain = await http.post(
    '/api/v1/tts/syntheses',
    { text, base_voice: 'f3', language: 'en-gb', speed: 1.5 },
    { token },
  );
  expect([viaVoice.status, inline.status, plain.status]).toEqual([202, 202, 202]);

  expect((await http.delete(`/api/v1/tts/voices/${voice.body.id}?version=1`, { token })).status).toBe(202);
  const queued = await http.get(`/api/v1/tts/syntheses/${viaVoice.body.id}`, { token });
  expect(queued.body).toMatchObject({ state: 'queued', voice_id: voice.body.id, ...settings });

  const config = server.config;
  worker = new SynthesisWorker({
    dataSource: db,
    engine,
    store: new DiskAudioStore(audioDir(config)),
    logger: createLogger(config),
    concurrency: 1,
    leaseSeconds: config.SYNTHESIS_LEASE_SECONDS,
    maxAttempts: config.SYNTHESIS_MAX_ATTEMPTS,
    pollMs: 20,
    maxAudioSeconds: config.SYNTHESIS_MAX_AUDIO_SECONDS,
  });
  worker.start();
  const done = async (id: string) =>
    until(
      async () => {
        const res = await http.get(`/api/v1/tts/syntheses/${id}`, { token });
        return ['succeeded', 'failed'].includes(res.body.state) && res.body;
      },
      `synthesis ${id} to finish`,
      60_000,
    );
  const [rendered, reference, other] = [
    await done(viaVoice.body.id),
    await done(inline.body.id),
    await done(plain.body.id),
  ];
  expect(rendered).toMatchObject({ state: 'succeeded', voice_id: voice.body.id, ...settings });
  const pitch = async (id: string) => {
    const res = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const wav = parseWav(Buffer.from(await res.arrayBuffer()));
    return medianPitch(wav.samples, wav.sampleRate);
  };
  // Speech like that of the same settings given inline (length: speed and language; pitch: the
  // blend), and unlike another voice at the same speed.
  expect(rendered.duration_ms).toBe(reference.duration_ms);
  const [p, ref, f3] = [await pitch(viaVoice.body.id), await pitch(inline.body.id), await pitch(plain.body.id)];
  expect(Math.abs(p - ref)).toBeLessThan(ref * 0.03);
  expect(f3).toBeGreaterThan(p * 1.2);
  expect(other.state).toBe('succeeded');
}, 120_000);
