// MP3 files carry an Info frame (Xing's header for a constant bitrate, with LAME's extension)
// when the whole file is known: read here from the bytes, as a player reads it, its frame count,
// byte count and seek table (TOC) must agree with the frames that follow, and its encoder delay
// and padding must give back the exact length of the PCM the engine rendered. The independent
// decoder (mpg123) finds the same frames, and the audio at the delay the tag states.
import { EspeakEngine } from '../../subgraphs/tts/engine/espeak';
import { decodeAudio } from '../helpers/decode-audio';

const engine = new EspeakEngine(1);
afterAll(() => engine.stop());

const TEXT = 'The quick brown fox jumps over the lazy dog. Then it runs far away into the forest, and back.';
/** What decoders add to the encoder's delay (mpg123's, FFmpeg's and LAME's own GAPLESS_DELAY). */
const DECODER_DELAY = 529;

async function render(sampleRate?: number) {
  const pieces: Int16Array[] = [];
  const encoded: Uint8Array[] = [];
  const audio = await engine.synthesize(
    { text: TEXT, baseVoice: 'f3', voiceBlend: null, language: 'en-us', speed: 1 },
    {
      maxSeconds: 60,
      sampleRate,
      encode: 'mp3',
      onAudio: (samples, _rate, bytes) => {
        pieces.push(samples);
        if (bytes?.length) encoded.push(bytes);
      },
    },
  );
  const pcm = new Int16Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    pcm.set(p, at);
    at += p.length;
  }
  const streamed = Buffer.concat([...encoded, ...(audio.encoded ?? [])]);
  const file = Buffer.from(streamed);
  if (audio.encodedPatch) file.set(audio.encodedPatch.bytes, audio.encodedPatch.offset);
  return { pcm, sampleRate: audio.sampleRate, file, streamed, patch: audio.encodedPatch };
}

/** An MPEG audio frame header: its length, samples and side information size. */
function frameAt(file: Buffer, at: number) {
  const h = file.readUInt32BE(at);
  if ((h & 0xffe00000) >>> 0 !== 0xffe00000) return null;
  const version = (h >>> 19) & 3; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
  const layer = (h >>> 17) & 3; // 1: Layer III
  const mpeg1 = version === 3;
  const kbps = (
    mpeg1
      ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
      : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
  )[(h >>> 12) & 15];
  const rate = [[11025, 12000, 8000], null, [22050, 24000, 16000], [44100, 48000, 32000]][version]![(h >>> 10) & 3];
  const mono = h >>> 6 === 3 || ((h >>> 6) & 3) === 3;
  if (layer !== 1 || !kbps || !rate) return null;
  return {
    rate,
    kbps,
    length: Math.floor(((mpeg1 ? 144 : 72) * kbps * 1000) / rate) + ((h >>> 9) & 1),
    samples: mpeg1 ? 1152 : 576,
    sideInfo: mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17,
  };
}

const crc16 = (bytes: Uint8Array) => {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b;
    for (let j = 0; j < 8; j++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc;
};

/** Reads the Info frame and LAME tag at the start of `file`, and walks the frames after it. */
function readInfo(file: Buffer) {
  const first = frameAt(file, 0)!;
  expect(first).not.toBeNull();
  const x = 4 + first.sideInfo;
  const tag = file.toString('latin1', x, x + 4);
  const flags = file.readUInt32BE(x + 4);
  const frames = file.readUInt32BE(x + 8);
  const bytes = file.readUInt32BE(x + 12);
  const toc = [...file.subarray(x + 16, x + 116)];
  const lame = x + 120;
  const delay = (file[lame + 21] << 4) | (file[lame + 22] >>> 4);
  const padding = ((file[lame + 22] & 15) << 8) | file[lame + 23];
  const starts: number[] = [];
  for (let at = first.length; at < file.length;) {
    const f = frameAt(file, at);
    if (!f) throw new Error(`no frame at ${at}`);
    expect([f.rate, f.kbps]).toEqual([first.rate, first.kbps]); // CBR, one rate
    starts.push(at);
    at += f.length;
  }
  return {
    first,
    tag,
    flags,
    frames,
    bytes,
    toc,
    version: file.toString('latin1', lame, lame + 9),
    method: file[lame + 9] & 15,
    delay,
    padding,
    musicLength: file.readUInt32BE(lame + 28),
    musicCrc: file.readUInt16BE(lame + 32),
    tagCrc: file.readUInt16BE(lame + 34),
    tagCrcOf: crc16(file.subarray(0, lame + 34)),
    musicCrcOf: crc16(file.subarray(first.length)),
    starts,
  };
}

describe('the Info frame of MP3 files', () => {
  it.each([[24000], [undefined]])(
    'at %p Hz: frame count, bytes and TOC match the file; delay and padding give the PCM length',
    async (rate) => {
      const { pcm, sampleRate, file, streamed, patch } = await render(rate);
      expect(patch?.offset).toBe(0);
      const info = readInfo(file);
      expect(info.first.rate).toBe(sampleRate);
      expect(info.tag).toBe('Info'); // constant bitrate
      expect(info.flags).toBe(0x0f);
      expect(info.frames).toBe(info.starts.length);
      expect(info.bytes).toBe(file.length);
      expect(info.musicLength).toBe(file.length);
      // The TOC: at each percent of the frames, where that frame starts, in 256ths of the file.
      const expected = Array.from({ length: 100 }, (_, i) =>
        Math.floor((info.starts[Math.floor((i * info.frames) / 100)] * 256) / file.length),
      );
      expect(info.toc).toEqual(expected);
      for (let i = 1; i < 100; i++) expect(info.toc[i]).toBeGreaterThanOrEqual(info.toc[i - 1]);
      expect([info.version, info.method]).toEqual(['LAME3.100', 1]);
      expect([info.tagCrc, info.musicCrc]).toEqual([info.tagCrcOf, info.musicCrcOf]);
      // The duration it states is the rendered PCM's, to the sample.
      expect(info.frames * info.first.samples - info.delay - info.padding).toBe(pcm.length);
      const seconds = (info.frames * info.first.samples - info.delay - info.padding) / sampleRate;
      expect(Math.abs(seconds - pcm.length / sampleRate)).toBeLessThan(1e-9);

      // mpg123 reads the tag as players do: it drops the delay and the padding (gapless), so it
      // gives back exactly the rendered samples, the audio aligned with them.
      const decoded = await decodeAudio('mp3', file);
      expect(decoded.errors).toBe(0);
      expect(decoded.samples.length).toBe(pcm.length);
      expect(Math.abs(bestLag(decoded.samples, pcm, -20, 20))).toBeLessThanOrEqual(2);
      // Without the tag (as streamed) it decodes every frame, the audio found after the delay.
      const whole = await decodeAudio('mp3', streamed);
      expect(whole.samples.length).toBe(info.frames * info.first.samples);
      const lag = bestLag(whole.samples, pcm, 900, 1400);
      expect(Math.abs(lag - (info.delay + DECODER_DELAY))).toBeLessThanOrEqual(2);

      // Streamed before the end, the same frame is there without its fields: players skip it.
      const placeholder = readInfo(streamed);
      expect([placeholder.tag, placeholder.flags]).toEqual(['Info', 0]);
      expect(streamed.subarray(info.first.length).equals(file.subarray(info.first.length))).toBe(true);
    },
  );
});

/** The offset into `decoded` where `pcm` matches best (normalised correlation over its loud part). */
function bestLag(decoded: Float32Array, pcm: Int16Array, from: number, to: number): number {
  let best = from;
  let bestScore = -Infinity;
  const n = Math.min(pcm.length, decoded.length - to, 20_000);
  for (let lag = from; lag <= to; lag++) {
    let dot = 0;
    let energy = 0;
    for (let i = Math.max(0, -lag); i < n; i++) {
      const d = decoded[i + lag];
      dot += d * pcm[i];
      energy += d * d;
    }
    const score = energy ? dot / Math.sqrt(energy) : -Infinity;
    if (score > bestScore) [best, bestScore] = [lag, score];
  }
  return best;
}
