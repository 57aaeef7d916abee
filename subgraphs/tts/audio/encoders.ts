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
    lame.configure({ channels: 1, sampleRate, bitrate: 64 });
    let input = new Float32Array(4096);
    return {
      push: (samples) => {
        if (!samples.length) return new Uint8Array(0);
        if (input.length < samples.length) input = new Float32Array(samples.length);
        for (let i = 0; i < samples.length; i++) input[i] = samples[i] / 32768;
        return lame.encode([input.subarray(0, samples.length)]).slice();
      },
      finish: () => lame.finalize().slice(),
      patch: () => null,
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
