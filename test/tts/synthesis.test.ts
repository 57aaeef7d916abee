// Speech synthesis through the REST facade and GraphQL, on SQLite and on MySQL: the audio is
// checked for being speech (it parses, lasts as long as the text suggests, is not silent, and
// follows the voice's speed and blend), and the download for RFC 9110 ranges.
import { get } from 'node:http';
import { api, createUserAndLogin, ISO_DATE, login, UUID } from '../helpers/http';
import { medianPitch, parseWav, rms, Wav } from '../helpers/audio';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { openStream } from '../helpers/sse';

let server: TestServer;
let http: ReturnType<typeof api>;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  http = api(server.url);
  token = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

const SENTENCE = 'The quick brown fox jumps over the lazy dog, and then it runs far away into the forest.';

async function synthesize(body: Record<string, unknown>, as = token): Promise<string> {
  const res = await http.post('/api/v1/tts/syntheses', body, { token: as });
  expect(res.status).toBe(202);
  return res.body.id;
}

async function finished(id: string, as = token, timeoutMs = 30_000, url = server.url): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(url).get(`/api/v1/tts/syntheses/${id}`, { token: as });
    expect(res.status).toBe(200);
    if (res.body.state === 'succeeded' || res.body.state === 'failed') return res.body;
    if (Date.now() > deadline) throw new Error(`synthesis ${id} still ${res.body.state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function download(id: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function speak(body: Record<string, unknown>): Promise<Wav> {
  const id = await synthesize(body);
  expect((await finished(id)).state).toBe('succeeded');
  const res = await download(id);
  expect(res.status).toBe(200);
  return parseWav(res.bytes);
}

const seconds = (wav: Wav) => wav.samples.length / wav.sampleRate;

describe('POST /api/v1/tts/syntheses, then GET it', () => {
  it('answers 202 + Location; the job runs to succeeded and reports its audio length', async () => {
    const voice = await http.post(
      '/api/v1/tts/voices',
      { name: 'narrator', base_voice: 'm3', language: 'en-gb', speed: 1.1 },
      { token },
    );
    const res = await http.post('/api/v1/tts/syntheses', { text: SENTENCE, voice_id: voice.body.id }, { token });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID), message: expect.any(String) });
    expect(res.headers.get('location')).toBe(`/api/v1/tts/syntheses/${res.body.id}`);

    const first = await http.get(res.headers.get('location')!, { token });
    expect(first.status).toBe(200);
    expect(['queued', 'running', 'succeeded']).toContain(first.body.state);

    const done = await finished(res.body.id);
    expect(done).toEqual({
      id: res.body.id,
      state: 'succeeded',
      voice_id: voice.body.id,
      base_voice: 'm3',
      voice_blend: null,
      language: 'en-gb',
      speed: 1.1,
      characters: SENTENCE.length,
      duration_ms: expect.any(Number),
      created_at: expect.stringMatching(ISO_DATE),
      started_at: expect.stringMatching(ISO_DATE),
      finished_at: expect.stringMatching(ISO_DATE),
    });
    expect(done).not.toHaveProperty('error');
    const wav = parseWav((await download(res.body.id)).bytes);
    expect(Math.abs(seconds(wav) * 1000 - done.duration_ms)).toBeLessThan(2);
  });

  it('renders speech: a WAV with correct RIFF sizes, as long as the text suggests, and not silent', async () => {
    const id = await synthesize({ text: SENTENCE, base_voice: 'f3' });
    await finished(id);
    const { status, headers, bytes } = await download(id);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('audio/wav');
    expect(Number(headers.get('content-length'))).toBe(bytes.length);
    const wav = parseWav(bytes);
    expect(wav).toMatchObject({ format: 1, channels: 1, bitsPerSample: 16, sampleRate: 22050 });
    expect(wav.riffSize).toBe(bytes.length - 8);
    expect(wav.dataSize).toBe(bytes.length - 44);
    // 17 words at eSpeak's 175 words a minute is about 5.8 s; allow for pauses and phrasing.
    const words = SENTENCE.split(/\s+/).length;
    expect(seconds(wav)).toBeGreaterThan((words / 175) * 60 * 0.6);
    expect(seconds(wav)).toBeLessThan((words / 175) * 60 * 1.6);
    expect(rms(wav.samples)).toBeGreaterThan(500);
  });

  it('follows the speed: half speed lasts much longer', async () => {
    const [normal, slow] = await Promise.all([
      speak({ text: SENTENCE, base_voice: 'm1' }),
      speak({ text: SENTENCE, base_voice: 'm1', speed: 0.5 }),
    ]);
    expect(seconds(slow) / seconds(normal)).toBeGreaterThan(1.5);
  });

  it('renders a blend as a new variant: f3(2)+m3(1) has a median pitch between those of f3 and m3', async () => {
    const [female, male, blend] = await Promise.all([
      speak({ text: SENTENCE, base_voice: 'f3' }),
      speak({ text: SENTENCE, base_voice: 'm3' }),
      speak({ text: SENTENCE, base_voice: 'f3', voice_blend: 'f3(2)+m3(1)' }),
    ]);
    const [f, m, b] = [female, male, blend].map((w) => medianPitch(w.samples, w.sampleRate));
    expect(f).toBeGreaterThan(m * 1.4); // the measure tells them apart
    expect(b).toBeGreaterThan(m * 1.05);
    expect(b).toBeLessThan(f * 0.95);
  });

  it('fails a job whose audio would run past SYNTHESIS_MAX_AUDIO_SECONDS, saying so', async () => {
    const long = await startTestServer({ SYNTHESIS_MAX_AUDIO_SECONDS: '10' });
    try {
      const owner = (await login(long.url, ADMIN)).access_token;
      const res = await api(long.url).post(
        '/api/v1/tts/syntheses',
        { text: 'one two three four five six seven eight nine ten. '.repeat(10), base_voice: 'f3' },
        { token: owner },
      );
      expect(res.status).toBe(202);
      const done = await finished(res.body.id, owner, 30_000, long.url);
      expect(done).toMatchObject({
        state: 'failed',
        error: expect.stringContaining('more than 10 seconds'),
        duration_ms: null,
      });
      expect(
        (await api(long.url).get(`/api/v1/tts/syntheses/${res.body.id}/audio`, { token: owner })).body,
      ).toMatchObject({ error: 'conflict', details: { state: 'failed' } });
    } finally {
      await long.close();
    }
  });

  it('follows the language: the same letters are pronounced as the language says', async () => {
    // "WWW" is "double-u double-u double-u" in English and "we we we" in German.
    const text = 'WWW. WWW. WWW.';
    const [english, german] = await Promise.all([
      speak({ text, base_voice: 'f1', language: 'en-us' }),
      speak({ text, base_voice: 'f1', language: 'de' }),
    ]);
    expect(rms(german.samples)).toBeGreaterThan(500);
    expect(seconds(english) / seconds(german)).toBeGreaterThan(1.3);
  });

  it('tells the caller on the event stream', async () => {
    const stream = await openStream(`${server.url}/api/v1/events?types=synthesis.succeeded,synthesis.failed`, {
      token,
    });
    try {
      const id = await synthesize({ text: 'Short and sweet.', base_voice: 'f2' });
      const [frame] = await stream.waitFor((f) => f.event === 'synthesis.succeeded' && f.data.id === id, 1, 20_000);
      expect(frame.data).toMatchObject({
        type: 'synthesis.succeeded',
        synthesis_id: id,
        state: 'succeeded',
        characters: 16,
        duration_ms: expect.any(Number),
      });
    } finally {
      stream.close();
    }
  });
});

describe('bad requests', () => {
  const problem = async (body: Record<string, unknown>, status: number, field?: string, as = token) => {
    const res = await http.post('/api/v1/tts/syntheses', body, { token: as });
    expect(res.status).toBe(status);
    if (field) expect(res.body.details).toHaveProperty(field);
    return res.body;
  };

  it('refuses empty, blank and too long text', async () => {
    await problem({ text: '', base_voice: 'f3' }, 400, 'text');
    await problem({ text: ' \n\t ', base_voice: 'f3' }, 400, 'text');
    await problem({ text: 'a'.repeat(10_001), base_voice: 'f3' }, 400, 'text');
    await problem({ base_voice: 'f3' }, 400, 'text');
  });

  it('counts characters, not UTF-16 units: 10,000 characters with an emoji (10,001 units) are allowed', async () => {
    // Mostly spaces, so that the job is quick to render.
    const res = await http.post(
      '/api/v1/tts/syntheses',
      { text: `🙂${' '.repeat(9_998)}a`, base_voice: 'f3' },
      { token },
    );
    expect(res.status).toBe(202);
    expect((await http.get(`/api/v1/tts/syntheses/${res.body.id}`, { token })).body.characters).toBe(10_000);
  });

  it('needs exactly one of voice_id and inline settings, and checks them', async () => {
    const voice = await http.post('/api/v1/tts/voices', { name: 'either-or', base_voice: 'f1' }, { token });
    await problem({ text: 'hi' }, 400, 'voice_id');
    await problem({ text: 'hi', voice_id: voice.body.id, speed: 2 }, 400, 'voice_id');
    await problem({ text: 'hi', base_voice: 'nobody' }, 400, 'base_voice');
    await problem({ text: 'hi', base_voice: 'f3', voice_blend: 'f3(0)' }, 400, 'voice_blend');
    await problem({ text: 'hi', base_voice: 'f3', language: 'xx-yy' }, 400, 'language');
    await problem({ text: 'hi', base_voice: 'f3', speed: 9 }, 400, 'speed');
    await problem({ text: 'hi', voice_id: 'not-a-uuid' }, 400, 'voice_id');
  });

  it("answers not_found for an unknown voice and for another user's voice or synthesis", async () => {
    const other = (await createUserAndLogin(server.url, token, 'synth-other')).token;
    const theirs = await http.post('/api/v1/tts/voices', { name: 'theirs', base_voice: 'f1' }, { token: other });
    expect((await problem({ text: 'hi', voice_id: '01900000-0000-7000-8000-000000000000' }, 404)).error).toBe(
      'not_found',
    );
    expect((await problem({ text: 'hi', voice_id: theirs.body.id }, 404)).error).toBe('not_found');
    const mine = await synthesize({ text: 'mine', base_voice: 'f3' });
    expect((await http.get(`/api/v1/tts/syntheses/${mine}`, { token: other })).status).toBe(404);
    expect((await http.get(`/api/v1/tts/syntheses/${mine}/audio`, { token: other })).status).toBe(404);
    expect((await http.get('/api/v1/tts/syntheses/01900000-0000-7000-8000-000000000000', { token })).status).toBe(404);
    expect((await http.get('/api/v1/tts/syntheses/nope', { token })).status).toBe(400);
    expect((await http.post('/api/v1/tts/syntheses', { text: 'hi', base_voice: 'f3' })).status).toBe(401);
  });
});

describe('GET /api/v1/tts/syntheses/{id}/audio', () => {
  let id: string;
  let whole: Buffer;
  beforeAll(async () => {
    id = await synthesize({ text: SENTENCE, base_voice: 'f4' });
    await finished(id);
    whole = (await download(id)).bytes;
  });

  it('serves one byte range as 206 with Content-Range', async () => {
    const res = await download(id, { range: 'bytes=100-1099' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 100-1099/${whole.length}`);
    expect(res.headers.get('content-length')).toBe('1000');
    expect(res.bytes.equals(whole.subarray(100, 1100))).toBe(true);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
  });

  it('serves suffix and open-ended ranges, clamps an end past the file', async () => {
    expect((await download(id, { range: 'bytes=-500' })).bytes.equals(whole.subarray(whole.length - 500))).toBe(true);
    const tail = await download(id, { range: `bytes=${whole.length - 10}-` });
    expect(tail.bytes.equals(whole.subarray(whole.length - 10))).toBe(true);
    const clamped = await download(id, { range: `bytes=0-${whole.length + 1000}` });
    expect(clamped.status).toBe(206);
    expect(clamped.bytes.equals(whole)).toBe(true);
  });

  it('answers 416 with Content-Range for a range past the end', async () => {
    const res = await download(id, { range: `bytes=${whole.length}-` });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${whole.length}`);
    expect(JSON.parse(res.bytes.toString())).toMatchObject({ error: 'range_not_satisfiable' });
  });

  it('sends the whole file for several ranges, a malformed Range, or an If-Range that no longer matches', async () => {
    const cases: Record<string, string>[] = [
      { range: 'bytes=0-9,100-109' },
      { range: 'pages=1-2' },
      { range: 'bytes=0-9', 'if-range': '"something else"' },
    ];
    for (const headers of cases) {
      const res = await download(id, headers);
      expect(res.status).toBe(200);
      expect(res.bytes.equals(whole)).toBe(true);
    }
    expect((await download(id, { range: 'bytes=0-9', 'if-range': `"${id}"` })).status).toBe(206);
  });

  it('answers HEAD with the headers only, and If-None-Match with 304', async () => {
    const head = await download(id, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(whole.length));
    expect(head.bytes.length).toBe(0);
    // node:http, because fetch adds Cache-Control: no-cache to conditional requests (a forced reload).
    const etag = head.headers.get('etag')!;
    const status = await new Promise<number>((resolve, reject) =>
      get(
        `${server.url}/api/v1/tts/syntheses/${id}/audio`,
        { headers: { authorization: `Bearer ${token}`, 'if-none-match': etag } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      ).on('error', reject),
    );
    expect(status).toBe(304);
  });

  it('sends a long file in pieces, byte for byte the same as GraphQL gives it', async () => {
    const longId = await synthesize({ text: `${SENTENCE} `.repeat(40), base_voice: 'm2', speed: 2 });
    await finished(longId);
    const res = await download(longId);
    expect(res.bytes.length).toBeGreaterThan(1024 * 1024); // more than two pieces
    expect(parseWav(res.bytes).riffSize).toBe(res.bytes.length - 8);
    const gql = await http.graphql(
      `query($id: ID!) { synthesis(id: $id) { state audio { bytes contentType chunk(offset: 1048570, length: 20) } } }`,
      { id: longId },
      token,
    );
    expect(gql.body.data.synthesis.audio).toEqual({
      bytes: res.bytes.length,
      contentType: 'audio/wav',
      chunk: res.bytes.subarray(1048570, 1048590).toString('base64'),
    });
  });

  it('is a conflict while the synthesis is not done, naming its state; 404 when unknown', async () => {
    const busy = await synthesize({ text: 'word '.repeat(400), base_voice: 'f3', speed: 0.5 });
    const res = await http.get(`/api/v1/tts/syntheses/${busy}/audio`, { token });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      error: 'conflict',
      details: { state: expect.stringMatching(/^(queued|running)$/) },
    });
    expect((await http.get('/api/v1/tts/syntheses/01900000-0000-7000-8000-000000000000/audio', { token })).status).toBe(
      404,
    );
    expect((await http.get(`/api/v1/tts/syntheses/${id}/audio?format=aac`, { token })).status).toBe(400);
  });
});

describe('GraphQL', () => {
  it('synthesize and synthesis(id) on the tts subgraph, with the audio in base64 pieces', async () => {
    const created = await http.graphql(
      `mutation { synthesize(text: "Hello there.", baseVoice: "f5", speed: 1.5) { id state characters owner { id } } }`,
      {},
      token,
    );
    expect(created.body.errors).toBeUndefined();
    const { id, state, characters } = created.body.data.synthesize;
    expect([state, characters]).toEqual(['QUEUED', 12]);
    await finished(id);
    const read = await http.graphql(
      `query($id: ID!) { synthesis(id: $id) { state speed durationMs audio { contentType bytes etag chunk(offset: 0, length: 4) } } }`,
      { id },
      token,
    );
    expect(read.body.data.synthesis).toMatchObject({
      state: 'SUCCEEDED',
      speed: 1.5,
      audio: { contentType: 'audio/wav', chunk: Buffer.from('RIFF').toString('base64') },
    });
  });

  it('refuses too much text and too large reads with validation errors', async () => {
    const long = await http.graphql(
      `mutation($t: String!) { synthesize(text: $t, baseVoice: "f5") { id } }`,
      { t: 'x'.repeat(10_001) },
      token,
    );
    expect(long.body.errors[0].extensions).toMatchObject({
      code: 'validation_error',
      details: { text: expect.any(Array) },
    });
    const queued = await http.graphql(`mutation { synthesize(text: "a", baseVoice: "f5") { id } }`, {}, token);
    await finished(queued.body.data.synthesize.id);
    const big = await http.graphql(
      `query($id: ID!) { synthesisAudio(id: $id) { chunk(offset: 0, length: 2000000) } }`,
      { id: queued.body.data.synthesize.id },
      token,
    );
    expect(big.body.errors[0].extensions.code).toBe('validation_error');
  });
});
