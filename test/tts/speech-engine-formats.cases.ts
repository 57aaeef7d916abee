// The engine thread's encoders and word timings, without a server: each format decoded by an
// independent decoder (test/helpers/decode-audio.ts) must last as long as the PCM the engine
// rendered beside it and not be silence; word timings come from eSpeak NG's word events and
// must match the text, be ordered, lie within the audio, and leave the pause between two
// sentences between words.
import { EspeakEngine } from '../../subgraphs/tts/engine/espeak';
import type { SpeechAudio, SpeechRequest } from '../../subgraphs/tts/engine/speech-engine';
import type { EncodedFormat } from '../../subgraphs/tts/audio/encoders';
import { rms } from '../helpers/audio';
import { decodeAudio, floatRms } from '../helpers/decode-audio';

const engine = new EspeakEngine(1);
afterAll(() => engine.stop());

const TWO_SENTENCES = 'The quick brown fox jumps over the lazy dog. Then it runs far away into the forest.';
const request = (text: string, speed = 1): SpeechRequest => ({
  text,
  baseVoice: 'f3',
  voiceBlend: null,
  language: 'en-us',
  speed,
});

/** Renders with `encode`, gathering the pieces as the synthesis worker does. */
async function render(text: string, encode?: EncodedFormat, sampleRate?: number, speed = 1) {
  const pieces: Int16Array[] = [];
  const encoded: Uint8Array[] = [];
  const audio: SpeechAudio = await engine.synthesize(request(text, speed), {
    maxSeconds: 60,
    sampleRate,
    encode,
    onAudio: (samples, _rate, bytes) => {
      pieces.push(samples);
      if (bytes?.length) encoded.push(bytes);
    },
  });
  const samples = new Int16Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    samples.set(p, at);
    at += p.length;
  }
  const file = Buffer.concat([...encoded, ...(audio.encoded ?? [])]);
  if (audio.encodedPatch) file.set(audio.encodedPatch.bytes, audio.encodedPatch.offset);
  return { samples, sampleRate: audio.sampleRate, file, pieces: encoded.length, timings: audio.timings! };
}

describe('encoding in the engine thread', () => {
  it.each([
    ['mp3', 24000],
    ['opus', 24000],
    ['flac', 24000],
    ['mp3', undefined],
    ['opus', undefined],
    ['flac', undefined],
  ] as [EncodedFormat, number | undefined][])(
    '%s at %p Hz decodes to the rendered length (within 2 %%), not silence',
    async (format, rate) => {
      const { samples, sampleRate, file, pieces } = await render(TWO_SENTENCES, format, rate);
      expect(pieces).toBeGreaterThan(1); // encoded while it rendered, not at the end
      const decoded = await decodeAudio(format, file);
      expect(decoded.errors).toBe(0);
      const seconds = samples.length / sampleRate;
      const decodedSeconds = decoded.samples.length / decoded.sampleRate;
      expect(Math.abs(decodedSeconds - seconds) / seconds).toBeLessThan(0.02);
      expect(floatRms(decoded.samples)).toBeGreaterThan(rms(samples) * 0.5);
      if (format === 'opus') expect(decoded.sampleRate).toBe(48000);
      else expect(decoded.sampleRate).toBe(sampleRate);
    },
  );
});

describe('word timings from the engine', () => {
  const words = (text: string) => text.split(/\s+/).filter(Boolean);

  it.each([1, 0.25, 4])('at speed %p match the words of the text, ordered and within the audio', async (speed) => {
    const { samples, sampleRate, timings } = await render(TWO_SENTENCES, undefined, 24000, speed);
    const durationMs = (samples.length * 1000) / sampleRate;
    const expected = words(TWO_SENTENCES);
    expect(timings.words).toHaveLength(expected.length);
    const chars = [...TWO_SENTENCES];
    timings.words.forEach((w, i) => {
      expect(chars.slice(w.charStart, w.charEnd).join('')).toBe(expected[i].replace(/[.,]$/, ''));
      expect(w.startMs).toBeLessThan(w.endMs);
      if (i) expect(w.startMs).toBe(timings.words[i - 1].endMs);
    });
    expect(timings.words[0].startMs).toBeGreaterThanOrEqual(0);
    expect(timings.words.at(-1)!.endMs).toBe(Math.round(durationMs));
    expect(timings.sentenceStarts).toEqual([0, TWO_SENTENCES.indexOf('Then')]);

    // The pause between the sentences: the quietest 150 ms lies after "dog" starts and before
    // "Then" ends. (At 4× eSpeak NG's fastest rate all but drops the pause, and the stretch the rest.)
    if (speed > 1) return;
    const window = Math.round(sampleRate * 0.15);
    let quietest = 0;
    let quietestRms = Infinity;
    const from = Math.round((timings.words[2].startMs * sampleRate) / 1000);
    const to = Math.round((timings.words.at(-3)!.startMs * sampleRate) / 1000);
    for (let at = from; at + window < to; at += window >> 2) {
      const r = rms(samples.subarray(at, at + window));
      if (r < quietestRms) [quietest, quietestRms] = [at, r];
    }
    const quietMs = ((quietest + window / 2) * 1000) / sampleRate;
    const dog = timings.words[8];
    const then = timings.words[9];
    expect(quietMs).toBeGreaterThan(dog.startMs);
    expect(quietMs).toBeLessThan(then.endMs);
    expect(quietestRms).toBeLessThan(rms(samples) * 0.1);
  });

  it('counts code points, not UTF-16 units', async () => {
    const text = 'Grüße 𝄞 music, naïve café.';
    const { timings } = await render(text);
    const chars = [...text];
    const spoken = timings.words.map((w) => chars.slice(w.charStart, w.charEnd).join(''));
    expect(spoken).toEqual(expect.arrayContaining(['Grüße', 'music', 'naïve', 'café']));
  });
});
