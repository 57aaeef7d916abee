// The OpenAI-compatible POST /v1/audio/speech, driven by the official `openai` client
// (client.audio.speech.create) against the running server, on SQLite and on MySQL; streaming
// while it renders and a client hanging up, with fetch.
import fs from 'node:fs';
import OpenAI from 'openai';
import { synthesisRenderSeconds } from '../../subgraphs/tts/metrics';
import { OPENAI_VOICES } from '../../subgraphs/tts/synthesis-service';
import { api, login } from '../helpers/http';
import { medianPitch, parseWav, rms } from '../helpers/audio';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';
import { audioDir } from '../../subgraphs/tts/settings';

let server: TestServer;
let token: string;
let client: OpenAI;

beforeAll(async () => {
  server = await startTestServer();
  token = (await login(server.url, ADMIN)).access_token;
  client = new OpenAI({ apiKey: token, baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 120_000 });
});
afterAll(() => server.close());

const TEXT = 'The quick brown fox jumps over the lazy dog.';

describe('POST /v1/audio/speech through the openai client', () => {
  it('answers a WAV of the text: parseable, mono 16-bit 24 kHz, of plausible length, not silent', async () => {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'f3', input: TEXT, response_format: 'wav' });
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('x-sample-rate')).toBe('24000');
    const bytes = Buffer.from(await res.arrayBuffer());
    const wav = parseWav(bytes);
    expect(wav).toMatchObject({ format: 1, channels: 1, bitsPerSample: 16, sampleRate: 24000 });
    // Streamed while rendering: the sizes say "unknown"; or, when the render was done before the first look, the real ones.
    expect([0xffffffff, bytes.length - 8]).toContain(wav.riffSize);
    expect(wav.samples.length * 2).toBe(bytes.length - 44);
    // 9 words at 175 a minute is about 3.1 s.
    const seconds = wav.samples.length / wav.sampleRate;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(6);
    expect(rms(wav.samples)).toBeGreaterThan(500);

    // It was an ordinary synthesis: listed, succeeded, with the audio it streamed.
    const id = res.headers.get('x-synthesis-id')!;
    const synthesis = (await api(server.url).get(`/api/v1/tts/syntheses/${id}`, { token })).body;
    expect(synthesis).toMatchObject({ state: 'succeeded', base_voice: 'f3', speed: 1, characters: TEXT.length });
    const stored = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const file = Buffer.from(await stored.arrayBuffer());
    expect(parseWav(file)).toMatchObject({ sampleRate: 24000, riffSize: file.length - 8, dataSize: file.length - 44 });
    expect(file.subarray(44).equals(bytes.subarray(44))).toBe(true);
  });

  it('takes a blend, one of my voice ids (its speed unless speed is given) and a speed; pcm is the samples without the header', async () => {
    const voice = await api(server.url).post(
      '/api/v1/tts/voices',
      { name: 'openai voice', base_voice: 'm3', speed: 2 },
      { token },
    );
    // Three at once: SPEECH_ANSWERS_PER_USER (3) are open until read to the end.
    const wavs = await Promise.all(
      [
        client.audio.speech.create({ model: 'tts-1', voice: voice.body.id, input: TEXT, response_format: 'wav' }),
        client.audio.speech.create({
          model: 'tts-1',
          voice: voice.body.id,
          input: TEXT,
          response_format: 'wav',
          speed: 1,
        }),
        client.audio.speech.create({ model: 'tts-1-hd', voice: 'f3(2)+m3', input: TEXT, response_format: 'wav' }),
      ].map(async (r) => parseWav(Buffer.from(await (await r).arrayBuffer()))),
    );
    const pcm = await client.audio.speech.create({
      model: 'tts-1',
      voice: 'm3',
      input: TEXT,
      response_format: 'pcm',
      speed: 2,
    });
    const pcmBytes = Buffer.from(await pcm.arrayBuffer());
    expect(pcm.headers.get('content-type')).toBe('audio/pcm');
    expect(pcmBytes.subarray(0, 4).toString('ascii')).not.toBe('RIFF');
    // pcm: exactly the stored WAV's samples without its 44-byte header, at 24 kHz as OpenAI's.
    expect(pcm.headers.get('x-sample-rate')).toBe('24000');
    const stored = await fetch(`${server.url}/api/v1/tts/syntheses/${pcm.headers.get('x-synthesis-id')}/audio`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(pcmBytes.equals(Buffer.from(await stored.arrayBuffer()).subarray(44))).toBe(true);
    // The stored voice speaks at its 2.0: as long as m3 at 2.0, and about half as long as at speed 1.
    expect(Math.abs(pcmBytes.length / 2 / wavs[0].samples.length - 1)).toBeLessThan(0.02);
    expect(wavs[1].samples.length / wavs[0].samples.length).toBeGreaterThan(1.6);
    const [male, mixed] = [wavs[1], wavs[2]].map((w) => medianPitch(w.samples, w.sampleRate));
    expect(mixed).toBeGreaterThan(male * 1.05); // f3(2)+m3 is higher than m3 alone
    const listed = (await api(server.url).get('/api/v1/tts/syntheses?limit=4', { token })).body.items;
    expect(listed.filter((s: any) => s.voice_id === voice.body.id)).toHaveLength(2);
  });

  it('refuses what it cannot do with OpenAI-shaped errors the client raises', async () => {
    const attempt = (params: Record<string, unknown>) =>
      client.audio.speech.create({ model: 'tts-1', voice: 'f3', input: TEXT, ...params } as any).then(
        () => null,
        (err: unknown) => err as InstanceType<typeof OpenAI.APIError>,
      );
    const cases: [Record<string, unknown>, number, string][] = [
      [{ voice: 'nobody' }, 400, 'voice'],
      [{ voice: 'f3(0)+m3' }, 400, 'voice'],
      [{ response_format: 'aac' }, 400, 'response_format'],
      [{ speed: 5 }, 400, 'speed'],
      [{ input: ' ' }, 400, 'input'],
      [{ voice: '01900000-0000-7000-8000-000000000000' }, 404, 'voice'],
    ];
    for (const [params, status, param] of cases) {
      const err = await attempt(params);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect([err!.status, (err as any).param]).toEqual([status, status === 404 ? null : param]);
      expect((err as any).error).toMatchObject({ type: expect.any(String), message: expect.any(String) });
    }
    const stranger = new OpenAI({ apiKey: 'not-a-token', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const unauthorized = await stranger.audio.speech
      .create({ model: 'tts-1', voice: 'f3', input: TEXT })
      .catch((e) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('answers a render that fails (audio past SYNTHESIS_MAX_AUDIO_SECONDS) with a 400 saying why, or cuts the stream it had begun', async () => {
    const short = await startTestServer({ SYNTHESIS_MAX_AUDIO_SECONDS: '10' });
    try {
      const owner = (await login(short.url, ADMIN)).access_token;
      const limited = new OpenAI({ apiKey: owner, baseURL: `${short.url}/v1`, maxRetries: 0 });
      // Failed before any audio was sent (a 400 with the reason), or after the first 10 s went out (the body breaks off).
      const err = await limited.audio.speech
        .create({ model: 'tts-1', voice: 'f3', input: 'one two three four five six seven eight nine ten. '.repeat(10) })
        .then((res) => res.arrayBuffer())
        .then(
          () => null,
          (e) => e,
        );
      expect(err).toBeTruthy(); // an APIError, or fetch's "terminated" TypeError (another realm's: not instanceof jest's)
      if (err instanceof OpenAI.APIError) {
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect(err.message).toContain('more than 10 seconds');
      }
      const [failed] = (await api(short.url).get('/api/v1/tts/syntheses?state=failed', { token: owner })).body.items;
      expect(failed.error).toContain('more than 10 seconds');
      // Nothing left of it in the audio folder: neither the file it was writing nor a finished one.
      await until(() => fs.readdirSync(audioDir(short.config)).length === 0, 'the partial audio to be removed');
    } finally {
      await short.close();
    }
  });

  it('answers 503 naming the synthesis when no audio comes within SPEECH_MAX_WAIT_SECONDS (no worker), and leaves it queued', async () => {
    const idle = await startTestServer({ SYNTHESIS_CONCURRENCY: '0', SPEECH_MAX_WAIT_SECONDS: '1' });
    try {
      const owner = (await login(idle.url, ADMIN)).access_token;
      const waiting = new OpenAI({ apiKey: owner, baseURL: `${idle.url}/v1`, maxRetries: 0 });
      const err = await waiting.audio.speech.create({ model: 'tts-1', voice: 'nova', input: TEXT }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect(err.status).toBe(503);
      const [queued] = (await api(idle.url).get('/api/v1/tts/syntheses', { token: owner })).body.items;
      expect(queued).toMatchObject({ state: 'queued', base_voice: 'f4' });
      expect(err.message).toContain(queued.id);
    } finally {
      await idle.close();
    }
  });

  it("takes OpenAI's voice names, each spoken by its base voice", async () => {
    expect(Object.keys(OPENAI_VOICES).sort()).toEqual([
      'alloy',
      'ash',
      'ballad',
      'coral',
      'echo',
      'fable',
      'nova',
      'onyx',
      'sage',
      'shimmer',
      'verse',
    ]);
    // A sentence, not a word: the median pitch of one short word moves with eSpeak NG's random noise (6.6 % once).
    const input = 'Hello there, this is a short sentence to compare two voices.';
    const [named, base] = await Promise.all([
      client.audio.speech.create({ model: 'tts-1', voice: 'onyx', input, response_format: 'pcm' }),
      client.audio.speech.create({ model: 'tts-1', voice: OPENAI_VOICES.onyx, input, response_format: 'pcm' }),
    ]);
    // eSpeak NG's noise sources are random: the same voice gives the same length and pitch, not the same bytes.
    const [a, b] = await Promise.all(
      [named, base].map(async (r) => new Int16Array(new Uint8Array(await r.arrayBuffer()).slice().buffer)),
    );
    expect(Math.abs(a.length / b.length - 1)).toBeLessThan(0.02);
    expect(Math.abs(medianPitch(a, 24000) / medianPitch(b, 24000) - 1)).toBeLessThan(0.05);
    const synthesis = (
      await api(server.url).get(`/api/v1/tts/syntheses/${named.headers.get('x-synthesis-id')}`, { token })
    ).body;
    expect(synthesis.base_voice).toBe(OPENAI_VOICES.onyx);
  });

  describe('streaming', () => {
    // About 2,000 words: minutes of audio, rendered in seconds; the first piece goes out long before the end.
    const LONG = 'The quick brown fox jumps over the lazy dog, and then it runs far away into the forest. '.repeat(110);
    const canceledRenders = async () =>
      (await synthesisRenderSeconds.get()).values.find(
        (v) => v.metricName === 'synthesis_render_seconds_count' && v.labels.outcome === 'canceled',
      )?.value ?? 0;
    const state = async (id: string) =>
      (await api(server.url).get(`/api/v1/tts/syntheses/${id}`, { token })).body.state as string;
    const speech = (body: Record<string, unknown>, signal?: AbortSignal) =>
      fetch(`${server.url}/v1/audio/speech`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ model: 'tts-1', voice: 'f3', ...body }),
        signal,
      });

    it('sends the first audio while the synthesis is still rendering, and stops the render when the client hangs up', async () => {
      const abort = new AbortController();
      const res = await speech({ input: LONG, response_format: 'pcm' }, abort.signal);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBeNull(); // length unknown: chunked
      const id = res.headers.get('x-synthesis-id')!;
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(first.value!.length).toBeGreaterThan(0);
      // At the first byte the job is still running, and its finished audio is not there yet.
      expect(await state(id)).toBe('running');
      expect(
        (
          await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).status,
      ).toBe(409);

      const canceledBefore = await canceledRenders();
      abort.abort();
      // The facade cancels the job; the worker's engine stops (its render ends as canceled, not succeeded) and leaves no file.
      await until(async () => (await state(id)) === 'canceled', 'the synthesis to be canceled');
      await until(async () => (await canceledRenders()) > canceledBefore, 'the render to stop');
      await until(
        () => !fs.readdirSync(audioDir(server.config)).some((f) => f.startsWith(id)),
        'its audio to be removed',
      );
      expect(fs.readdirSync(audioDir(server.config)).filter((f) => f.startsWith(id))).toEqual([]);
    });

    it('streams a whole long WAV: the header says "length unknown", the samples are those stored', async () => {
      const res = await speech({ input: LONG.slice(0, 3000), response_format: 'wav', speed: 3 });
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.readUInt32LE(4)).toBe(0xffffffff);
      expect(bytes.readUInt32LE(40)).toBe(0xffffffff);
      const id = res.headers.get('x-synthesis-id')!;
      expect(await state(id)).toBe('succeeded');
      const stored = Buffer.from(
        await (
          await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).arrayBuffer(),
      );
      expect(stored.subarray(44).equals(bytes.subarray(44))).toBe(true);
      expect(stored.readUInt32LE(40)).toBe(stored.length - 44);
    });
  });

  it('takes no name from the object prototype: "constructor" and "__proto__" are unknown voices (400), not 500s', async () => {
    for (const voice of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const err = await client.audio.speech.create({ model: 'tts-1', voice, input: TEXT }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect([err.status, err.param]).toEqual([400, 'voice']);
    }
  });

  it('answers a full queue with 429, Retry-After and an OpenAI-shaped error, and every refusal in that shape', async () => {
    const idle = await startTestServer({ SYNTHESIS_CONCURRENCY: '0', SYNTHESIS_QUEUE_PER_USER: '1' });
    try {
      const owner = (await login(idle.url, ADMIN)).access_token;
      expect(
        (await api(idle.url).post('/api/v1/tts/syntheses', { text: 'Waiting.', base_voice: 'f3' }, { token: owner }))
          .status,
      ).toBe(202);
      const full = await new OpenAI({ apiKey: owner, baseURL: `${idle.url}/v1`, maxRetries: 0 }).audio.speech
        .create({ model: 'tts-1', voice: 'f3', input: TEXT })
        .catch((e) => e);
      expect(full).toBeInstanceOf(OpenAI.RateLimitError);
      expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(full.error).toMatchObject({
        type: 'rate_limit_exceeded',
        code: 'rate_limit_exceeded',
        param: null,
        message: expect.stringContaining('queued or running'),
      });
      // Bodies the parser refuses are OpenAI-shaped too.
      for (const [body, type, status] of [
        ['{not json', 'application/json', 400],
        ['x'.repeat(300 * 1024), 'application/json', 413],
      ] as const) {
        const res = await fetch(`${idle.url}/v1/audio/speech`, {
          method: 'POST',
          headers: { 'content-type': type, authorization: `Bearer ${owner}` },
          body,
        });
        expect(res.status).toBe(status);
        expect(await res.json()).toMatchObject({
          error: { message: expect.any(String), type: expect.any(String), code: expect.any(String) },
        });
      }
    } finally {
      await idle.close();
    }
  });

  it('keeps at most SPEECH_ANSWERS_PER_USER answers open per user (429 with Retry-After), counted until each ends', async () => {
    const idle = await startTestServer({
      SYNTHESIS_CONCURRENCY: '0',
      SPEECH_ANSWERS_PER_USER: '1',
      SPEECH_MAX_WAIT_SECONDS: '2',
    });
    try {
      const owner = (await login(idle.url, ADMIN)).access_token;
      const speech = new OpenAI({ apiKey: owner, baseURL: `${idle.url}/v1`, maxRetries: 0 });
      const ask = () => speech.audio.speech.create({ model: 'tts-1', voice: 'f3', input: TEXT }).catch((e) => e);
      const first = ask(); // waits for audio that never comes (no worker), then 503
      await until(
        async () => (await api(idle.url).get('/api/v1/tts/syntheses', { token: owner })).body.items.length === 1,
        'the first to be queued',
      );
      const second = await ask();
      expect(second).toBeInstanceOf(OpenAI.RateLimitError);
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(second.error).toMatchObject({ type: 'rate_limit_exceeded', param: null });
      expect((await first).status).toBe(503);
      // Once the first has ended, another may open.
      expect((await ask()).status).toBe(503);
    } finally {
      await idle.close();
    }
  });

  it('answers mp3 when response_format is left out (as OpenAI), and 405 to other methods', async () => {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'f1', input: 'Hi.' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = Buffer.from(await res.arrayBuffer());
    // An MPEG audio frame: 11 sync bits, MPEG-2 (24 kHz), layer III.
    expect([bytes[0], bytes[1] & 0xfe]).toEqual([0xff, 0xf2]);
    expect((await fetch(`${server.url}/v1/audio/speech`)).status).toBe(405);
  });
});
