// The resampler that turns eSpeak NG's 22,050 Hz into the OpenAI endpoint's 24 kHz, measured on
// sines: exact length, the same result in any pieces, the signal kept (error, level) and the
// rates it refuses. Pure computation: the same on both databases.
import { createResampler } from '../../subgraphs/tts/engine/resample';

const FROM = 22050;
const TO = 24000;
const sine = (hz: number, rate: number, n: number, amplitude = 10000) =>
  Int16Array.from({ length: n }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));

function resample(input: Int16Array, pieces: number[], from = FROM, to = TO): Int16Array {
  const r = createResampler(from, to);
  const out: Int16Array[] = [];
  let at = 0;
  for (let i = 0; at < input.length; i++) {
    const size = pieces[i % pieces.length];
    out.push(r.push(input.subarray(at, at + size)));
    at += size;
  }
  out.push(r.finish());
  const all = new Int16Array(out.reduce((n, p) => n + p.length, 0));
  let w = 0;
  for (const p of out) {
    all.set(p, w);
    w += p.length;
  }
  return all;
}

describe('createResampler (polyphase windowed sinc)', () => {
  const input = sine(440, FROM, FROM); // 1 s

  it('gives exactly round(n × 24000 / 22050) samples, the same in any pieces as in one', () => {
    const whole = resample(input, [input.length]);
    expect(whole.length).toBe(Math.round((input.length * TO) / FROM));
    for (const pieces of [[2205], [1, 7, 300], [4096, 13]]) expect(resample(input, pieces)).toEqual(whole);
    expect(resample(new Int16Array(0), [1])).toHaveLength(0);
  });

  it.each([100, 440, 3000, 9000])(
    'keeps a %p Hz sine: within 1%% of the ideal resampled sine, the same level',
    (hz) => {
      const out = resample(sine(hz, FROM, FROM), [2205]);
      const ideal = sine(hz, TO, out.length);
      // Away from the edges (the filter reaches 16 samples each way), sample by sample.
      let worst = 0;
      for (let i = 100; i < out.length - 100; i++) worst = Math.max(worst, Math.abs(out[i] - ideal[i]));
      expect(worst).toBeLessThan(100); // 1% of the amplitude
    },
  );

  it('filters out what the lower rate cannot carry when it goes down', () => {
    // 11 kHz fits 24 kHz but not 16 kHz (Nyquist 8 kHz): going down it must nearly vanish.
    const high = sine(11000, TO, TO);
    const down = resample(high, [4000], TO, 16000);
    const level = Math.sqrt(down.subarray(100, -100).reduce((s, v) => s + v * v, 0) / (down.length - 200));
    expect(level).toBeLessThan(10000 * 0.05);
  });

  it('refuses rates that are not whole numbers above 0', () => {
    for (const [from, to] of [
      [0, 24000],
      [22050, -1],
      [22050.5, 24000],
    ])
      expect(() => createResampler(from, to)).toThrow(/sample rates/);
  });
});
