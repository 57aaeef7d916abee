// RIFF/WAVE for mono 16-bit PCM: a 44-byte header and the samples, little-endian.
import { endianness } from 'node:os';
import type { SpeechAudio } from '../engine/speech-engine';

export const WAV_CONTENT_TYPE = 'audio/wav';
export const WAV_HEADER_BYTES = 44;
const HEADER_BYTES = WAV_HEADER_BYTES;
/** The sizes of a WAV whose length is not known yet (streamed while it renders), as OpenAI and Kokoro write them. */
export const UNKNOWN_SIZE = 0xffffffff;

/** The 44-byte header of `dataBytes` bytes of samples; UNKNOWN_SIZE while they are still coming. */
export function wavHeader(sampleRate: number, dataBytes: number): Buffer {
  const wav = Buffer.alloc(HEADER_BYTES);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(dataBytes === UNKNOWN_SIZE ? UNKNOWN_SIZE : HEADER_BYTES - 8 + dataBytes, 4); // everything after this field
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28); // bytes per second
  wav.writeUInt16LE(2, 32); // bytes per frame
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataBytes, 40);
  return wav;
}

/** Samples as WAV's little-endian bytes. */
export function pcmBytes(samples: Int16Array): Buffer {
  if (endianness() === 'LE') return Buffer.from(samples.buffer, samples.byteOffset, samples.length * 2);
  const bytes = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i], i * 2);
  return bytes;
}

export const durationMs = ({ sampleRate, samples }: SpeechAudio) => Math.round((samples.length * 1000) / sampleRate);
