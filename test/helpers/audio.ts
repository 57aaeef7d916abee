// Reading WAV files and measuring what is in them, for tests that check audio really is speech.

export interface Wav {
  riffSize: number;
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  dataSize: number;
  samples: Int16Array;
}

/** Parses a RIFF/WAVE file chunk by chunk; throws on anything malformed. */
export function parseWav(bytes: Buffer): Wav {
  if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE')
    throw new Error('not RIFF/WAVE');
  const riffSize = bytes.readUInt32LE(4);
  let fmt: Omit<Wav, 'riffSize' | 'dataSize' | 'samples'> | undefined;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = bytes.toString('ascii', at, at + 4);
    const body = at + 8;
    // A streamed WAV's data size is 0xFFFFFFFF (length unknown when sent): the data runs to the end.
    const size =
      id === 'data' && bytes.readUInt32LE(at + 4) === 0xffffffff
        ? (bytes.length - body) & ~1
        : bytes.readUInt32LE(at + 4);
    if (body + size > bytes.length) throw new Error(`chunk ${id} runs past the end`);
    if (id === 'fmt ') {
      fmt = {
        format: bytes.readUInt16LE(body),
        channels: bytes.readUInt16LE(body + 2),
        sampleRate: bytes.readUInt32LE(body + 4),
        bitsPerSample: bytes.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!fmt) throw new Error('data before fmt');
      const samples = new Int16Array(size / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(body + i * 2);
      return { riffSize, dataSize: size, samples, ...fmt };
    }
    at = body + size + (size % 2);
  }
  throw new Error('no data chunk');
}

export function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

/**
 * The median fundamental frequency of the voiced parts, in Hz: normalised autocorrelation over
 * 40 ms frames, 60–400 Hz, frames counted as voiced when loud enough and clearly periodic.
 */
export function medianPitch(samples: Int16Array, sampleRate: number): number {
  const frame = Math.round(sampleRate * 0.04);
  const [minLag, maxLag] = [Math.floor(sampleRate / 400), Math.ceil(sampleRate / 60)];
  const loudness: number[] = [];
  for (let at = 0; at + frame + maxLag < samples.length; at += frame)
    loudness.push(rms(samples.subarray(at, at + frame)));
  const floor = 0.3 * Math.max(...loudness);
  const pitches: number[] = [];
  for (let at = 0, f = 0; at + frame + maxLag < samples.length; at += frame, f++) {
    if (loudness[f] < floor) continue;
    const r: number[] = [];
    for (let lag = minLag; lag <= maxLag; lag++) {
      let cross = 0;
      let e1 = 0;
      let e2 = 0;
      for (let i = at; i < at + frame; i++) {
        cross += samples[i] * samples[i + lag];
        e1 += samples[i] * samples[i];
        e2 += samples[i + lag] * samples[i + lag];
      }
      r.push(cross / Math.sqrt(e1 * e2 || 1));
    }
    const best = Math.max(...r);
    // The shortest period that correlates nearly as well: multiples of the period do too.
    const i = r.findIndex(
      (v, k) => v >= 0.9 * best && (k === 0 || v >= r[k - 1]) && (k === r.length - 1 || v >= r[k + 1]),
    );
    if (best > 0.6 && i >= 0) pitches.push(sampleRate / (minLag + i));
  }
  if (!pitches.length) throw new Error('no voiced frames');
  pitches.sort((a, b) => a - b);
  return pitches[Math.floor(pitches.length / 2)];
}
