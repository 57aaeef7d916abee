// Speech in every format, through the running server (SQLite and MySQL): POST /v1/audio/speech
// with the official `openai` client (each response_format decoded by an independent decoder and
// compared with the stored WAV; OpenAI's SSE events; `stream: false`), stored syntheses by
// ?format= and Accept (encoded on the first request, cached, counted in the quota, deleted
// with the synthesis), and word timings (JSON, WebVTT and GraphQL).
import fs from 'node:fs';
import OpenAI from 'openai';
import { Stream } from 'openai/core/streaming';
import { api, createUserAndLogin, login } from '../helpers/http';
import { parseWav, rms } from '../helpers/audio';
import { decodeAudio, floatRms } from '../helpers/decode-audio';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';
import { audioDir } from '../../subgraphs/tts/settings';

let server: TestServer;
let token: string;
let client: OpenAI;

beforeAll(async () => {
  server = await startTestServer();
  const admin = await login(server.url, ADMIN);
  token = (await createUserAndLogin(server.url, admin.access_token, 'formats')).token;
  client = new OpenAI({ apiKey: token, baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 120_000 });
});
afterAll(() => server.close());

const TEXT = 'The quick brown fox jumps over the lazy dog. Then it runs far away into the forest.';
const auth = () => ({ authorization: `Bearer ${token}` });

/** The stored WAV of a synthesis: its length in seconds and loudness. */
async function storedWav(id: string) {
  const res = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio`, { headers: auth() });
  expect(res.headers.get('content-type')).toBe('audio/wav');
  const wav = parseWav(Buffer.from(await res.arrayBuffer()));
  return { seconds: wav.samples.length / wav.sampleRate, rms: rms(wav.samples), wav };
}

async function expectLike(format: 'mp3' | 'opus' | 'flac', bytes: Buffer, id: string) {
  const decoded = await decodeAudio(format, bytes);
  expect(decoded.errors).toBe(0);
  const stored = await storedWav(id);
  const seconds = decoded.samples.length / decoded.sampleRate;
  expect(Math.abs(seconds - stored.seconds) / stored.seconds).toBeLessThan(0.02);
  expect(floatRms(decoded.samples)).toBeGreaterThan(stored.rms * 0.5);
  return decoded;
}

describe('POST /v1/audio/speech formats, with the openai client', () => {
  it('answers MP3 when no format is asked for, as OpenAI does', async () => {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: TEXT });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('content-length')).toBeNull(); // streamed while it encoded
    const bytes = Buffer.from(await res.arrayBuffer());
    const decoded = await expectLike('mp3', bytes, res.headers.get('x-synthesis-id')!);
    expect(decoded.sampleRate).toBe(24000);
  });

  it.each([
    ['opus', 'audio/ogg', 48000],
    ['flac', 'audio/flac', 24000],
  ] as const)('answers %s (%s) that decodes to the WAV’s length, not silence', async (format, type, rate) => {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'm3', input: TEXT, response_format: format });
    expect(res.headers.get('content-type')).toBe(type);
    const bytes = Buffer.from(await res.arrayBuffer());
    const decoded = await expectLike(format, bytes, res.headers.get('x-synthesis-id')!);
    expect(decoded.sampleRate).toBe(rate);
    // The encoding made while it rendered is the one kept beside the WAV (FLAC's with its length and MD5 written in).
    const id = res.headers.get('x-synthesis-id')!;
    const kept = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio?format=${format}`, { headers: auth() });
    expect(kept.headers.get('content-length')).not.toBeNull();
    const file = Buffer.from(await kept.arrayBuffer());
    expect(file.length).toBe(bytes.length);
    if (format === 'opus') expect(file.equals(bytes)).toBe(true);
  });

  it('refuses aac and unknown formats with a 400 that names the allowed values', async () => {
    for (const format of ['aac', 'ogg']) {
      const res = await fetch(`${server.url}/v1/audio/speech`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tts-1', voice: 'f3', input: TEXT, response_format: format }),
      });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { param: string; message: string } };
      expect(error.param).toBe('response_format');
      expect(error.message).toContain('mp3, opus, flac, wav, pcm');
      expect(error.message).toContain('aac is not served');
    }
  });

  it('answers the whole WAV with its true sizes when stream is false', async () => {
    const res = await fetch(`${server.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', voice: 'f3', input: TEXT, response_format: 'wav', stream: false }),
    });
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    const wav = parseWav(bytes);
    expect(wav.riffSize).toBe(bytes.length - 8);
    expect(wav.dataSize).toBe(bytes.length - 44);
    expect(rms(wav.samples)).toBeGreaterThan(500);
  });

  it("streams OpenAI's speech.audio.delta events and a final speech.audio.done with usage", async () => {
    const res = await client.audio.speech.create({
      model: 'gpt-4o-mini-tts',
      voice: 'nova',
      input: TEXT,
      response_format: 'flac',
      stream_format: 'sse',
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events: any[] = [];
    for await (const event of Stream.fromSSEResponse<any>(res, new AbortController())) events.push(event);
    const deltas = events.filter((e) => e.type === 'speech.audio.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.at(-1)).toMatchObject({
      type: 'speech.audio.done',
      usage: { input_tokens: [...TEXT].length, output_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    expect(events.at(-1).usage.output_tokens).toBeGreaterThan(50); // 20 ms frames of about 5 s
    const bytes = Buffer.concat(deltas.map((d) => Buffer.from(d.audio, 'base64')));
    await expectLike('flac', bytes, res.headers.get('x-synthesis-id')!);
  });
});

describe('stored syntheses in other formats', () => {
  let id: string;
  beforeAll(async () => {
    const created = await api(server.url).post('/api/v1/tts/syntheses', { text: TEXT, base_voice: 'f2' }, { token });
    expect(created.status).toBe(202);
    id = created.body.id;
    await until(
      async () => (await api(server.url).get(`/api/v1/tts/syntheses/${id}`, { token })).body.state === 'succeeded',
      'the synthesis',
      60_000,
    );
  });

  it('negotiates by Accept and ?format= (which wins): no Accept or */* is WAV, a match for nothing is 406', async () => {
    const get = (query: string, accept?: string) =>
      fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio${query}`, {
        headers: { ...auth(), ...(accept ? { accept } : {}) },
      });
    expect((await get('')).headers.get('content-type')).toBe('audio/wav');
    expect((await get('', '*/*')).headers.get('content-type')).toBe('audio/wav');
    const pcm = await get('', 'audio/pcm');
    expect(pcm.headers.get('content-type')).toBe('audio/pcm');
    expect(Buffer.from(await pcm.arrayBuffer()).length).toBe((await storedWav(id)).wav.samples.length * 2);
    expect((await get('?format=wav', 'audio/pcm')).headers.get('content-type')).toBe('audio/wav');
    const refused = await get('', 'text/html');
    expect(refused.status).toBe(406);
    expect(((await refused.json()) as { error: string }).error).toBe('not_acceptable');
    const unknown = await get('?format=aac');
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(await unknown.json())).toContain('wav, pcm, mp3, opus, flac');
  });

  it.each(['mp3', 'opus', 'flac'] as const)(
    '%s: the first request streams it while it encodes, later ones come from the cache with Range',
    async (format) => {
      const first = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio?format=${format}`, { headers: auth() });
      expect(first.status).toBe(200);
      expect(first.headers.get('content-length')).toBeNull();
      const bytes = Buffer.from(await first.arrayBuffer());
      await expectLike(format, bytes, id);

      // Past the header the stored file wrote at commit (MP3's Info frame, FLAC's STREAMINFO),
      // which the streamed copy has without its values: the same bytes.
      const cached = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/audio?format=${format}`, {
        headers: { ...auth(), range: 'bytes=300-399' },
      });
      expect(cached.status).toBe(206);
      expect(cached.headers.get('content-range')).toBe(`bytes 300-399/${bytes.length}`);
      expect(Buffer.from(await cached.arrayBuffer()).equals(bytes.subarray(300, 400))).toBe(true);
    },
  );

  it('deletes the cached encodings with the synthesis', async () => {
    const dir = audioDir(server.config);
    const files = () => fs.readdirSync(dir).filter((f) => f.startsWith(id));
    await until(() => files().length === 4 && files(), 'the WAV and three encodings');
    const deleted = await api(server.url).delete(`/api/v1/tts/syntheses/${id}`, { token });
    expect(deleted.status).toBe(202);
    expect(files()).toEqual([]);
  });
});

describe('the audio quota', () => {
  it('counts the encodings cached beside a WAV', async () => {
    // The same text and voice make the same WAV: a quota just above its size lets one more
    // request in while only the WAV is kept, and none once its FLAC is kept beside it.
    const created = await api(server.url).post('/api/v1/tts/syntheses', { text: TEXT, base_voice: 'f5' }, { token });
    const wavBytes = await until(async () => {
      const s = await api(server.url).get(`/api/v1/tts/syntheses/${created.body.id}/audio`, { token });
      return s.status === 200 && s.text.length > 0 && Number(s.headers.get('content-length'));
    }, 'the WAV');
    const small = await startTestServer({ AUDIO_BYTES_PER_USER: String(wavBytes + 1000) });
    try {
      const admin = await login(small.url, ADMIN);
      const user = await createUserAndLogin(small.url, admin.access_token, 'quota');
      const http = api(small.url);
      const first = await http.post('/api/v1/tts/syntheses', { text: TEXT, base_voice: 'f5' }, user);
      await until(
        async () => (await http.get(`/api/v1/tts/syntheses/${first.body.id}`, user)).body.state === 'succeeded',
        'the first synthesis',
        60_000,
      );
      const flac = await fetch(`${small.url}/api/v1/tts/syntheses/${first.body.id}/audio?format=flac`, {
        headers: { authorization: `Bearer ${user.token}` },
      });
      expect((await flac.arrayBuffer()).byteLength).toBeGreaterThan(1000);
      const refused = await until(async () => {
        const r = await http.post('/api/v1/tts/syntheses', { text: TEXT, base_voice: 'f5' }, user);
        if (r.status === 202) await http.delete(`/api/v1/tts/syntheses/${r.body.id}`, user); // counted not yet
        return r.status === 409 && r;
      }, 'the quota to count the FLAC');
      expect(refused.body.details.limit).toBe(wavBytes + 1000);
      expect(refused.body.details.bytes).toBeGreaterThan(wavBytes + 1000);
    } finally {
      await small.close();
    }
  });
});

describe('word timings', () => {
  let id: string;
  const words = TEXT.split(/\s+/);

  it('is 409 until the synthesis has succeeded', async () => {
    const long = `${TEXT} `.repeat(40);
    const created = await api(server.url).post('/api/v1/tts/syntheses', { text: long, base_voice: 'm1' }, { token });
    const early = await api(server.url).get(`/api/v1/tts/syntheses/${created.body.id}/timings`, { token });
    expect(early.status).toBe(409);
    expect(['queued', 'running']).toContain(early.body.details.state);
    await api(server.url).delete(`/api/v1/tts/syntheses/${created.body.id}`, { token });
  });

  it('lists each word of the text in order, within the audio; WebVTT has a cue per sentence; GraphQL has them too', async () => {
    const created = await api(server.url).post('/api/v1/tts/syntheses', { text: TEXT, base_voice: 'f1' }, { token });
    id = created.body.id;
    await until(
      async () => (await api(server.url).get(`/api/v1/tts/syntheses/${id}`, { token })).body.state === 'succeeded',
      'the synthesis',
      60_000,
    );
    const { status, body } = await api(server.url).get(`/api/v1/tts/syntheses/${id}/timings`, { token });
    expect(status).toBe(200);
    expect(body).toHaveLength(words.length);
    const durationMs = (await api(server.url).get(`/api/v1/tts/syntheses/${id}`, { token })).body.duration_ms;
    const chars = [...TEXT];
    body.forEach((w: any, i: number) => {
      expect(w.word).toBe(words[i].replace(/\.$/, ''));
      expect(chars.slice(w.char_start, w.char_end).join('')).toBe(w.word);
      expect(w.start_ms).toBeLessThan(w.end_ms);
      if (i) expect(w.start_ms).toBe(body[i - 1].end_ms);
    });
    expect(Math.abs(body.at(-1).end_ms - durationMs)).toBeLessThanOrEqual(1);

    const vtt = await fetch(`${server.url}/api/v1/tts/syntheses/${id}/timings?format=vtt`, { headers: auth() });
    expect(vtt.headers.get('content-type')).toMatch(/^text\/vtt/);
    const text = await vtt.text();
    expect(text.startsWith('WEBVTT\n\n')).toBe(true);
    const cues = text.trim().split('\n\n').slice(1);
    expect(cues).toHaveLength(2);
    expect(cues[0]).toMatch(/^1\n00:00:00\.\d{3} --> 00:00:0\d\.\d{3}\nThe quick brown fox jumps over the lazy dog\.$/);
    expect(cues[1]).toContain('Then it runs far away into the forest.');

    const gql = await api(server.url).post(
      '/graphql',
      {
        query: 'query($id: ID!) { synthesis(id: $id) { timings { word startMs endMs charStart charEnd } } }',
        variables: { id },
      },
      { token },
    );
    expect(gql.body.data.synthesis.timings).toEqual(
      body.map((w: any) => ({
        word: w.word,
        startMs: w.start_ms,
        endMs: w.end_ms,
        charStart: w.char_start,
        charEnd: w.char_end,
      })),
    );
  });
});
