// Sample-rate conversion of mono 16-bit PCM by a rational factor (22,050 → 24,000 Hz is 160/147),
// streaming: a polyphase windowed-sinc filter (Blackman window, 16 zero crossings each side,
// cut-off at 95% of the lower Nyquist frequency), the textbook design of libsamplerate's and
// SoX's sinc converters at a fixed ratio. Written here rather than taken from a library because
// the engine threads run it as source text (self-contained, synchronous, no WebAssembly to load)
// and the one ratio needed makes it 60 lines; test/tts/resample.cases.ts measures it.
import type { PcmStage } from './time-stretch';

export function createResampler(fromRate: number, toRate: number): PcmStage {
  if (!(Number.isInteger(fromRate) && Number.isInteger(toRate) && fromRate > 0 && toRate > 0))
    throw new Error(`sample rates must be whole numbers above 0 (got ${fromRate} → ${toRate})`);
  const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);
  const g = gcd(fromRate, toRate);
  const up = toRate / g; // output n sits at input position n * down / up
  const down = fromRate / g;
  const HALF = 16;
  const width = 2 * HALF;
  const cutoff = 0.95 * Math.min(1, toRate / fromRate); // of the input's Nyquist frequency
  // taps[phase * width + k] weighs input sample floor(pos) - HALF + 1 + k, for pos's fraction phase / up.
  const taps = new Float64Array(up * width);
  for (let phase = 0; phase < up; phase++) {
    let sum = 0;
    for (let k = 0; k < width; k++) {
      const x = k - HALF + 1 - phase / up; // distance from the output's position, in input samples
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * cutoff * x) / (Math.PI * cutoff * x);
      const w =
        Math.abs(x) >= HALF
          ? 0
          : 0.42 + 0.5 * Math.cos((Math.PI * x) / HALF) + 0.08 * Math.cos((2 * Math.PI * x) / HALF);
      taps[phase * width + k] = sinc * w;
      sum += sinc * w;
    }
    for (let k = 0; k < width; k++) taps[phase * width + k] /= sum; // unity gain at 0 Hz
  }

  // Input kept from `base` on (the oldest sample a next output still needs), HALF - 1 zeros before the first.
  let buffer = new Float64Array(4096);
  let base = -(HALF - 1);
  let length = HALF - 1;
  let taken = 0;
  let made = 0;

  const append = (samples: Int16Array | null, count: number) => {
    if (length + count > buffer.length) {
      const bigger = new Float64Array(Math.max(buffer.length * 2, length + count));
      bigger.set(buffer.subarray(0, length));
      buffer = bigger;
    }
    for (let i = 0; i < count; i++) buffer[length + i] = samples ? samples[i] : 0;
    length += count;
  };
  /** Outputs while their filter's last input is there, up to `limit` outputs in all. */
  const produce = (limit: number): Int16Array => {
    // Written into one array of the most outputs possible (no list of numbers to convert), the
    // input position kept as a whole part and a phase instead of a division per output.
    const out = new Int16Array(Math.max(0, limit - made));
    let n = 0;
    let whole = Math.floor((made * down) / up);
    let phase = made * down - whole * up;
    for (; made < limit; made++) {
      const first = whole - HALF + 1 - base;
      if (first + width > length) break;
      let acc = 0;
      const t = phase * width;
      for (let k = 0; k < width; k++) acc += buffer[first + k] * taps[t + k];
      const v = Math.round(acc);
      out[n++] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      phase += down;
      while (phase >= up) {
        phase -= up;
        whole++;
      }
    }
    // Drop what no later output needs.
    const keepFrom = Math.floor((made * down) / up) - HALF + 1 - base;
    if (keepFrom > 4096) {
      buffer.copyWithin(0, keepFrom, length);
      length -= keepFrom;
      base += keepFrom;
    }
    return n === out.length ? out : out.slice(0, n);
  };

  return {
    push(samples) {
      append(samples, samples.length);
      taken += samples.length;
      return produce(Math.round((taken * up) / down));
    },
    finish() {
      append(null, HALF); // the filter's tail reaches past the last sample
      return produce(Math.round((taken * up) / down));
    },
  };
}
