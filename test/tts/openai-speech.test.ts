// The OpenAI-compatible POST /v1/audio/speech, driven by the official `openai` client
// (client.audio.speech.create) against the running server, on SQLite and on MySQL.
import OpenAI from 'openai';
import { api, login } from '../helpers/http';
import { medianPitch, parseWav, rms } from '../helpers/audio';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

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
  it('answers a WAV of the text: parseable, mono 16-bit 22,050 Hz, of plausible length, not silent', async () => {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'f3', input: TEXT, response_format: 'wav' });
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    const wav = parseWav(bytes);
    expect(wav).toMatchObject({ format: 1, channels: 1, bitsPerSample: 16, sampleRate: 22050, riffSize: bytes.length - 8 });
    // 9 words at 175 a minute is about 3.1 s.
    const seconds = wav.samples.length / wav.sampleRate;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(6);
    expect(rms(wav.samples)).toBeGreaterThan(500);

    // It was an ordinary synthesis: listed, succeeded, with the audio it streamed.
    const id = res.headers.get('x-synthesis-id')!;
    const synthesis = (await api(server.url).get(`/api/v1/tts/syntheses/${id}`, { token })).body;
    expect(synthesis).toMatchObject({ state: 'succeeded', base_voice: 'f3', speed: 1, characters: TEXT.length });
    const stored = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, { headers: { authorization: `Bearer ${token}` } });
    expect(Buffer.from(await stored.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('takes a blend, one of my voice ids (its speed unless speed is given) and a speed; pcm is the samples without the header', async () => {
    const voice = await api(server.url).post('/api/v1/tts/voices', { name: 'openai voice', base_voice: 'm3', speed: 2 }, { token });
    const [byId, byIdSlow, blend, pcm] = await Promise.all([
      client.audio.speech.create({ model: 'tts-1', voice: voice.body.id, input: TEXT, response_format: 'wav' }),
      client.audio.speech.create({ model: 'tts-1', voice: voice.body.id, input: TEXT, response_format: 'wav', speed: 1 }),
      client.audio.speech.create({ model: 'tts-1-hd', voice: 'f3(2)+m3', input: TEXT, response_format: 'wav' }),
      client.audio.speech.create({ model: 'tts-1', voice: 'm3', input: TEXT, response_format: 'pcm', speed: 2 }),
    ]);
    const wavs = await Promise.all([byId, byIdSlow, blend].map(async (r) => parseWav(Buffer.from(await r.arrayBuffer()))));
    const pcmBytes = Buffer.from(await pcm.arrayBuffer());
    expect(pcm.headers.get('content-type')).toBe('audio/pcm');
    expect(pcmBytes.subarray(0, 4).toString('ascii')).not.toBe('RIFF');
    // pcm: exactly the stored WAV's samples without its 44-byte header.
    const stored = await fetch(`${server.url}/api/v1/tts/syntheses/${pcm.headers.get('x-synthesis-id')}/audio`, { headers: { authorization: `Bearer ${token}` } });
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
      client.audio.speech.create({ model: 'tts-1', voice: 'f3', input: TEXT, ...params } as any).then(() => null, (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
    const cases: [Record<string, unknown>, number, string][] = [
      [{ voice: 'alloy' }, 400, 'voice'],
      [{ voice: 'f3(0)+m3' }, 400, 'voice'],
      [{ response_format: 'mp3' }, 400, 'response_format'],
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
    const unauthorized = await stranger.audio.speech.create({ model: 'tts-1', voice: 'f3', input: TEXT }).catch((e) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('answers a render that fails (audio past SYNTHESIS_MAX_AUDIO_SECONDS) with a 400 saying why', async () => {
    const short = await startTestServer({ SYNTHESIS_MAX_AUDIO_SECONDS: '10' });
    try {
      const owner = (await login(short.url, ADMIN)).access_token;
      const limited = new OpenAI({ apiKey: owner, baseURL: `${short.url}/v1`, maxRetries: 0 });
      const err = await limited.audio.speech.create({ model: 'tts-1', voice: 'f3', input: 'one two three four five six seven eight nine ten. '.repeat(10) }).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.message).toContain('more than 10 seconds');
    } finally {
      await short.close();
    }
  });

  it('answers wav when response_format is left out, and 405 to other methods', async () => {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'f1', input: 'Hi.' });
    expect(parseWav(Buffer.from(await res.arrayBuffer())).sampleRate).toBe(22050);
    expect((await fetch(`${server.url}/v1/audio/speech`)).status).toBe(405);
  });
});
