// The full speed range, measured on the audio (on SQLite and on MySQL, through the REST API):
// eSpeak NG speaks only 80–450 words a minute, so 0.25 and 4.0 are reached by rendering at the
// nearest rate and time-stretching the rest with WSOLA, which must keep the pitch.
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createTimeStretch, timeStretch } from '../../subgraphs/tts/engine/time-stretch';
import { stretchTempo } from '../../subgraphs/tts/engine/espeak';
import { medianPitch, parseWav, rms, Wav } from '../helpers/audio';
import { api, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

const SENTENCE = 'The quick brown fox jumps over the lazy dog, and then it runs far away into the forest.';

describe('timeStretch (WSOLA, soundtouchjs)', () => {
  // A voiced-like test signal: 150 Hz with a harmonic, 2 s at 22,050 Hz.
  const rate = 22050;
  const signal = new Int16Array(rate * 2).map((_, i) =>
    Math.round(6000 * (Math.sin((2 * Math.PI * 150 * i) / rate) + 0.5 * Math.sin((2 * Math.PI * 300 * i) / rate))),
  );

  /** Runs the function's source in a worker thread with soundtouchjs imported natively, as the engine threads do. */
  function stretched(input: Int16Array, tempo: number, pieces = 0): Promise<Int16Array> {
    const source = `
      const createTimeStretch = ${createTimeStretch.toString()};
      const timeStretch = ${timeStretch.toString()};
      // In pieces, as the engine streams it: each piece in, what comes out gathered.
      const inPieces = (samples, rate, tempo, Stretch) => {
        const stage = createTimeStretch(rate, tempo, Stretch);
        const out = [];
        for (let at = 0; at < samples.length; at += workerData.pieces) out.push(stage.push(samples.subarray(at, at + workerData.pieces)));
        out.push(stage.finish());
        const all = new Int16Array(out.reduce((n, p) => n + p.length, 0));
        let w = 0;
        for (const p of out) { all.set(p, w); w += p.length; }
        return all;
      };
      const { parentPort, workerData } = require('node:worker_threads');
      import(workerData.url).then(({ Stretch }) => {
        try { parentPort.postMessage({ samples: (workerData.pieces ? inPieces : timeStretch)(workerData.samples, workerData.rate, workerData.tempo, Stretch) }); }
        catch (err) { parentPort.postMessage({ error: err.message }); }
      });`;
    const worker = new Worker(source, {
      eval: true,
      workerData: { url: pathToFileURL(require.resolve('soundtouchjs')).href, samples: input, rate, tempo, pieces },
    });
    return new Promise<Int16Array>((resolve, reject) => {
      worker.once('message', ({ samples, error }) => (error ? reject(new Error(error)) : resolve(samples)));
      worker.once('error', reject);
    }).finally(() => worker.terminate());
  }

  it.each([0.25, 0.547, 1.556, 4])(
    'at tempo %p gives exactly length/tempo samples at the same pitch',
    async (tempo) => {
      const out = await stretched(signal, tempo);
      expect(out.length).toBe(Math.round(signal.length / tempo));
      expect(Math.abs(medianPitch(out, rate) - medianPitch(signal, rate))).toBeLessThan(5);
      // Not padded out with silence: the middle of the result is as loud as the input.
      const middle = out.subarray(Math.floor(out.length * 0.25), Math.floor(out.length * 0.75));
      expect(rms(middle)).toBeGreaterThan(rms(signal) * 0.8);
    },
  );

  it.each([0.25, 4])(
    'at tempo %p gives the same samples streamed in eSpeak-sized pieces (2,205) as in one go',
    async (tempo) => {
      const [whole, streamed] = await Promise.all([stretched(signal, tempo), stretched(signal, tempo, 2205)]);
      expect(streamed.length).toBe(whole.length);
      expect(streamed).toEqual(whole);
    },
  );

  it('leaves tempo 1 alone and refuses a tempo that is not above 0', async () => {
    expect(await stretched(signal, 1)).toEqual(signal);
    await expect(stretched(signal, 0)).rejects.toThrow(/tempo/);
  });

  it('stretches only beyond what eSpeak NG speaks (80–450 words a minute)', () => {
    expect(stretchTempo(1)).toBe(1);
    expect(stretchTempo(2.5)).toBeCloseTo(1, 2);
    expect(stretchTempo(0.25)).toBeCloseTo(0.25 / (80 / 175), 6);
    expect(stretchTempo(4)).toBeCloseTo(4 / (450 / 175), 6);
  });
});

describe('speeds 0.25 to 4.0 through the API', () => {
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({ SYNTHESIS_CONCURRENCY: '2' });
    token = (await login(server.url, ADMIN)).access_token;
  });
  afterAll(() => server.close());

  async function speak(speed: number): Promise<Wav> {
    const http = api(server.url);
    const res = await http.post('/api/v1/tts/syntheses', { text: SENTENCE, base_voice: 'm1', speed }, { token });
    expect(res.status).toBe(202);
    for (;;) {
      const s = (await http.get(`/api/v1/tts/syntheses/${res.body.id}`, { token })).body;
      if (s.state === 'failed') throw new Error(s.error);
      if (s.state === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const audio = await fetch(`${server.url}/api/v1/tts/syntheses/${res.body.id}/audio`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return parseWav(Buffer.from(await audio.arrayBuffer()));
  }

  it('0.25 lasts 3.6–4.4 times as long as 1.0 and 4.0 0.22–0.28 times, at a median pitch within 10% of 1.0', async () => {
    const [slowest, normal, fastest] = await Promise.all([speak(0.25), speak(1), speak(4)]);
    const seconds = (w: Wav) => w.samples.length / w.sampleRate;
    const pitch = (w: Wav) => medianPitch(w.samples, w.sampleRate);
    expect(seconds(slowest) / seconds(normal)).toBeGreaterThanOrEqual(3.6);
    expect(seconds(slowest) / seconds(normal)).toBeLessThanOrEqual(4.4);
    expect(seconds(fastest) / seconds(normal)).toBeGreaterThanOrEqual(0.22);
    expect(seconds(fastest) / seconds(normal)).toBeLessThanOrEqual(0.28);
    for (const w of [slowest, fastest]) {
      expect(Math.abs(pitch(w) / pitch(normal) - 1)).toBeLessThan(0.1);
      expect(rms(w.samples)).toBeGreaterThan(500);
    }
  });

  it('gets longer step by step as the speed goes down, past the engine limits too', async () => {
    const lengths = [];
    for (const speed of [4, 3, 2, 0.5, 0.35]) lengths.push((await speak(speed)).samples.length);
    for (let i = 1; i < lengths.length; i++) expect(lengths[i]).toBeGreaterThan(lengths[i - 1] * 1.1);
  });
});
