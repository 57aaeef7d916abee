// The compressed formats speech is served in, encoded a piece at a time while the audio comes:
// MP3 by LAME (wasm-media-encoders, WebAssembly), Opus by libopus (opusscript, WebAssembly)
// in an Ogg stream muxed here (RFC 7845), FLAC by libFLAC (libflacjs, WebAssembly). The encoder
// is one self-contained function: it runs in the engine's threads and in the encoder pool's,
// whose code is built from its source (see engine/espeak.ts), so it uses nothing from this file
// but its arguments.
import type { createResampler } from '../engine/resample';

/** Every format a client may ask for (OpenAI's names), the default first. */
export const AUDIO_FORMATS = ['mp3', 'opus', 'flac', 'wav', 'pcm'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];
/** The formats made by an encoder (and cached beside a stored synthesis's WAV). */
export type EncodedFormat = 'mp3' | 'opus' | 'flac';
export const ENCODED_FORMATS: readonly EncodedFormat[] = ['mp3', 'opus', 'flac'];
export const isEncoded = (format: string): format is EncodedFormat => (ENCODED_FORMATS as string[]).includes(format);

export const AUDIO_CONTENT_TYPES: Record<AudioFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** The file name ending of a cached encoding. */
export const ENCODED_EXTENSIONS: Record<EncodedFormat, string> = { mp3: 'mp3', opus: 'ogg', flac: 'flac' };

/** Why `aac` is refused: no well-kept AAC encoder is published as JavaScript or WebAssembly. */
export const AAC_REFUSAL =
  'aac is not served: no well-kept AAC encoder exists as JavaScript or WebAssembly; ask for mp3, opus, flac, wav or pcm';

/** What the encoders are made of, loaded by the thread that runs them. */
export interface EncoderLibraries {
  /** A LAME instance (instantiating its WebAssembly is asynchronous: done before createAudioEncoder). */
  createMp3Encoder: () => Promise<Mp3Encoder>;
  OpusScript: any;
  Flac: any;
  createResampler: typeof createResampler;
}

/** wasm-media-encoders' LAME, as used here. */
export interface Mp3Encoder {
  configure(params: { channels: 1 | 2; sampleRate: number; bitrate: number }): void;
  encode(samples: Float32Array[]): Uint8Array;
  finalize(): Uint8Array;
}

export interface AudioEncoder {
  /** The encoded bytes these samples completed (often none yet). */
  push(samples: Int16Array): Uint8Array;
  /** The rest, once the audio has ended. */
  finish(): Uint8Array;
  /**
   * Bytes to write over the start of the finished file, known only at the end (FLAC's
   * STREAMINFO: the length and MD5); a streamed copy goes without them, as the format allows.
   */
  patch(): { offset: number; bytes: Uint8Array } | null;
}

/**
 * `lame`: for mp3, a LAME instance from libs.createMp3Encoder() (its output buffer is reused
 * between calls, so each answer is copied out).
 */
export function createAudioEncoder(
  format: 'mp3' | 'opus' | 'flac',
  sampleRate: number,
  libs: EncoderLibraries,
  lame?: Mp3Encoder,
): AudioEncoder {
  const join = (parts: Uint8Array[]): Uint8Array => {
    if (parts.length === 1) return parts[0];
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };

  if (format === 'mp3') {
    if (!lame) throw new Error('an mp3 encoder needs a LAME instance');
    const BITRATE = 64;
    lame.configure({ channels: 1, sampleRate, bitrate: BITRATE });
    let input = new Float32Array(4096);
    // The Info frame (Xing's header for a CBR stream, with LAME's extension): the first frame of
    // the file, no audio, that tells players the frame count, the byte count, a seek table and
    // the encoder's delay and padding, so that they know the duration exactly and seek where
    // they should. It is sent first as a frame without fields (what LAME writes where it cannot
    // go back; players skip it), and written whole over it once the file is known (patch()).
    // The rest of the stream is read as it passes: each frame's offset, and the CRC of it all.
    const ENCODER_DELAY = 576; // LAME's own (ENCDELAY); decoders add their 529 themselves
    const CRC16 = new Uint16Array(256); // CRC-16/ARC, as LAME's tag uses it
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let j = 0; j < 8; j++) c = c & 1 ? (c >>> 1) ^ 0xa001 : c >>> 1;
      CRC16[i] = c;
    }
    const crc16 = (crc: number, bytes: Uint8Array, from = 0, to = bytes.length) => {
      for (let i = from; i < to; i++) crc = (crc >>> 8) ^ CRC16[(crc ^ bytes[i]) & 0xff];
      return crc;
    };
    let info: Uint8Array | null = null; // the Info frame as first sent
    let sideInfo = 0;
    let samplesPerFrame = 0;
    let inputSamples = 0;
    let audioBytes = 0; // after the Info frame
    let musicCrc = 0;
    const frameStarts: number[] = []; // audio frames' offsets from the start of the file
    let carry = new Uint8Array(0); // the start of a frame header split between two pieces
    let nextFrame = 0; // where the next frame header is, counted in audio bytes
    let lost = false; // a frame header did not read: no more offsets (the TOC keeps those before)
    /** Reads the frame headers in `bytes` (the stream's next audio bytes), noting each frame's offset. */
    const scan = (bytes: Uint8Array) => {
      if (lost) return;
      const base = audioBytes - carry.length;
      const all = carry.length ? join([carry, bytes]) : bytes;
      while (nextFrame + 4 <= base + all.length) {
        const at = nextFrame - base;
        const h = (all[at] << 24) | (all[at + 1] << 16) | (all[at + 2] << 8) | all[at + 3];
        if ((h & 0xffe00000) >>> 0 !== 0xffe00000) {
          lost = true;
          return;
        }
        const mpeg1 = ((h >>> 19) & 3) === 3;
        const rates = mpeg1
          ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
          : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
        const kbps = rates[(h >>> 12) & 15] ?? 0;
        if (!kbps) {
          lost = true;
          return;
        }
        frameStarts.push((info?.length ?? 0) + nextFrame);
        nextFrame += Math.floor(((mpeg1 ? 144 : 72) * kbps * 1000) / sampleRate) + ((h >>> 9) & 1);
      }
      const keep = Math.max(0, Math.min(all.length, base + all.length - nextFrame));
      carry = keep > 0 && keep < 4 ? all.slice(all.length - keep) : new Uint8Array(0);
    };
    /** The encoder's output as the file has it: the Info frame before the first frame. */
    const out = (bytes: Uint8Array): Uint8Array => {
      if (!bytes.length) return bytes;
      let head: Uint8Array | null = null;
      if (!info) {
        // The first frame's header, without padding, heads the Info frame (the same bitrate: CBR).
        const h = new Uint8Array([bytes[0], bytes[1], bytes[2] & ~2, bytes[3]]);
        const mpeg1 = ((h[1] >>> 3) & 3) === 3;
        const mono = h[3] >>> 6 === 3;
        sideInfo = mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17;
        samplesPerFrame = mpeg1 ? 1152 : 576;
        const length = Math.floor(((mpeg1 ? 144 : 72) * BITRATE * 1000) / sampleRate);
        info = new Uint8Array(length);
        info.set(h);
        info.set([0x49, 0x6e, 0x66, 0x6f], 4 + sideInfo); // "Info", no fields yet
        head = info;
      }
      scan(bytes);
      musicCrc = crc16(musicCrc, bytes);
      audioBytes += bytes.length;
      return head ? join([head, bytes]) : bytes;
    };
    return {
      push: (samples) => {
        if (!samples.length) return new Uint8Array(0);
        if (input.length < samples.length) input = new Float32Array(samples.length);
        for (let i = 0; i < samples.length; i++) input[i] = samples[i] / 32768;
        inputSamples += samples.length;
        return out(lame.encode([input.subarray(0, samples.length)]).slice());
      },
      finish: () => out(lame.finalize().slice()),
      patch: () => {
        if (!info || info.length < 4 + sideInfo + 156) return null;
        const frame = new Uint8Array(info.length);
        frame.set(info.subarray(0, 4));
        const v = new DataView(frame.buffer);
        const frames = frameStarts.length;
        const total = info.length + audioBytes;
        let at = 4 + sideInfo;
        frame.set([0x49, 0x6e, 0x66, 0x6f], at); // "Info": a constant bitrate
        v.setUint32(at + 4, 0x0f); // frames, bytes, TOC and quality follow
        v.setUint32(at + 8, frames);
        v.setUint32(at + 12, total);
        // TOC: at each percent of the duration, the byte offset of its frame, in 256ths of the file.
        for (let i = 0; i < 100; i++) {
          const offset = frames ? frameStarts[Math.min(frames - 1, Math.floor((i * frames) / 100))] : 0;
          frame[at + 16 + i] = Math.min(255, Math.floor((offset * 256) / total));
        }
        v.setUint32(at + 116, 0); // quality: not used by CBR
        at += 120;
        // LAME's extension (the "LAME tag"): version, CBR, delay and padding, sizes and CRCs.
        frame.set(
          Array.from('LAME3.100', (c) => c.charCodeAt(0)),
          at,
        );
        frame[at + 9] = 0x01; // tag revision 0, method: constant bitrate
        frame[at + 20] = Math.min(255, BITRATE);
        const padding = Math.max(0, Math.min(4095, frames * samplesPerFrame - ENCODER_DELAY - inputSamples));
        frame[at + 21] = ENCODER_DELAY >>> 4;
        frame[at + 22] = ((ENCODER_DELAY & 15) << 4) | (padding >>> 8);
        frame[at + 23] = padding & 255;
        v.setUint32(at + 28, total);
        v.setUint16(at + 32, musicCrc);
        v.setUint16(at + 34, crc16(0, frame, 0, at + 34));
        return { offset: 0, bytes: frame };
      },
    };
  }

  if (format === 'flac') {
    const { Flac } = libs;
    const encoder: number = Flac.create_libflac_encoder(sampleRate, 1, 16, 5, 0, false);
    if (!encoder) throw new Error('the FLAC encoder could not be made');
    let out: Uint8Array[] = [];
    let info: any;
    const status = Flac.init_encoder_stream(
      encoder,
      (data: Uint8Array) => void out.push(data.slice()),
      (meta: any) => (info = meta),
    );
    if (status !== 0) throw new Error(`the FLAC encoder did not start (${status})`);
    let buffer = new Int32Array(4096);
    const take = () => {
      const bytes = join(out);
      out = [];
      return bytes;
    };
    return {
      push: (samples) => {
        if (!samples.length) return new Uint8Array(0);
        if (buffer.length < samples.length) buffer = new Int32Array(samples.length);
        for (let i = 0; i < samples.length; i++) buffer[i] = samples[i];
        if (!Flac.FLAC__stream_encoder_process_interleaved(encoder, buffer, samples.length))
          throw new Error('the FLAC encoder failed');
        return take();
      },
      finish: () => {
        Flac.FLAC__stream_encoder_finish(encoder);
        Flac.FLAC__stream_encoder_delete(encoder);
        return take();
      },
      // STREAMINFO (34 bytes after "fLaC" and the block's 4-byte header): the encoder could not
      // go back to write the length and MD5 into a stream; its metadata callback has them.
      patch: () => {
        if (!info) return null;
        const s = new Uint8Array(34);
        const v = new DataView(s.buffer);
        v.setUint16(0, info.min_blocksize);
        v.setUint16(2, info.max_blocksize);
        const u24 = (at: number, n: number) => {
          s[at] = (n >>> 16) & 255;
          s[at + 1] = (n >>> 8) & 255;
          s[at + 2] = n & 255;
        };
        u24(4, info.min_framesize);
        u24(7, info.max_framesize);
        // 20 bits rate, 3 bits channels-1, 5 bits bits-1, 36 bits total samples.
        const total = Number(info.total_samples);
        s[10] = (info.sampleRate >>> 12) & 255;
        s[11] = (info.sampleRate >>> 4) & 255;
        s[12] =
          ((info.sampleRate & 15) << 4) | (((info.channels - 1) & 7) << 1) | (((info.bitsPerSample - 1) >> 4) & 1);
        s[13] = (((info.bitsPerSample - 1) & 15) << 4) | (Math.floor(total / 2 ** 32) & 15);
        v.setUint32(14, total >>> 0);
        for (let i = 0; i < 16; i++) s[18 + i] = parseInt(String(info.md5sum).slice(i * 2, i * 2 + 2), 16) || 0;
        return { offset: 8, bytes: s };
      },
    };
  }

  // Ogg Opus (RFC 7845). libopus takes 8, 12, 16, 24 or 48 kHz; other rates (eSpeak NG's
  // 22,050 Hz) are resampled to 24 kHz first. Granule positions count 48 kHz samples.
  const OPUS_RATES = [8000, 12000, 16000, 24000, 48000];
  const inRate = OPUS_RATES.includes(sampleRate) ? sampleRate : 24000;
  const resampler = inRate === sampleRate ? null : libs.createResampler(sampleRate, inRate);
  const opus = new libs.OpusScript(inRate, 1, libs.OpusScript.Application.AUDIO);
  opus.setBitrate(32_000);
  const frame = inRate / 50; // 20 ms
  const toGranule = 48000 / inRate;
  const PRE_SKIP = 312; // libopus's look-ahead at 48 kHz
  const serial = (Math.random() * 0xffffffff) >>> 0;
  let sequence = 0;
  let granule = 0;
  let held = new Int16Array(0);
  let pending: Uint8Array[] = [];

  const CRC = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    CRC[i] = r >>> 0;
  }
  /** One Ogg page of whole packets (each under 255 × 255 bytes). */
  const page = (packets: Uint8Array[], position: number, flags: number): Uint8Array => {
    const lacing: number[] = [];
    for (const p of packets) {
      let n = p.length;
      while (n >= 255) {
        lacing.push(255);
        n -= 255;
      }
      lacing.push(n);
    }
    const body = join(packets);
    const out = new Uint8Array(27 + lacing.length + body.length);
    const v = new DataView(out.buffer);
    out.set([0x4f, 0x67, 0x67, 0x53], 0); // OggS
    out[5] = flags;
    v.setUint32(6, position >>> 0, true);
    v.setUint32(10, Math.floor(position / 2 ** 32), true);
    v.setUint32(14, serial, true);
    v.setUint32(18, sequence++, true);
    out[26] = lacing.length;
    out.set(lacing, 27);
    out.set(body, 27 + lacing.length);
    let crc = 0;
    for (let i = 0; i < out.length; i++) crc = ((crc << 8) ^ CRC[((crc >>> 24) ^ out[i]) & 255]) >>> 0;
    v.setUint32(22, crc, true);
    return out;
  };
  const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
  const head = new Uint8Array(19);
  head.set(ascii('OpusHead'));
  head[8] = 1; // version
  head[9] = 1; // channels
  new DataView(head.buffer).setUint16(10, PRE_SKIP, true);
  new DataView(head.buffer).setUint32(12, sampleRate, true);
  const vendor = ascii('libopus (opusscript)');
  const tags = new Uint8Array(8 + 4 + vendor.length + 4);
  tags.set(ascii('OpusTags'));
  new DataView(tags.buffer).setUint32(8, vendor.length, true);
  tags.set(vendor, 12);
  let headers: Uint8Array | null = join([page([head], 0, 2), page([tags], 0, 0)]);

  /** Encodes whole frames of `samples` (all of them with `last`, the tail padded with silence). */
  const encode = (samples: Int16Array, last: boolean): Uint8Array => {
    let all = samples;
    if (held.length) {
      all = new Int16Array(held.length + samples.length);
      all.set(held);
      all.set(samples, held.length);
    }
    let at = 0;
    const total = last ? Math.ceil(all.length / frame) * frame : all.length - (all.length % frame);
    const input = new Int16Array(frame);
    for (; at + frame <= total; at += frame) {
      if (at + frame <= all.length) input.set(all.subarray(at, at + frame));
      else {
        input.fill(0);
        input.set(all.subarray(at));
      }
      pending.push(new Uint8Array(opus.encode(input, frame)));
    }
    const real = Math.min(at, all.length);
    held = all.slice(real);
    // The last page's granule is the real length: the decoder drops the padding.
    granule += real * toGranule;
    const out: Uint8Array[] = [];
    if (headers) {
      out.push(headers); // the stream's first bytes: OpusHead and OpusTags pages
      headers = null;
    }
    if (pending.length && (last || pending.length >= 5)) {
      out.push(page(pending, PRE_SKIP + granule, last ? 4 : 0));
      pending = [];
    } else if (last) out.push(page([], PRE_SKIP + granule, 4));
    return out.length ? join(out) : new Uint8Array(0);
  };

  return {
    push: (samples) => encode(resampler ? resampler.push(samples) : samples, false),
    finish: () => {
      const bytes = encode(resampler ? resampler.finish() : new Int16Array(0), true);
      opus.delete();
      return bytes;
    },
    patch: () => null,
  };
}
