// RIFF/WAVE for mono 16-bit PCM: a 44-byte header and the samples, little-endian.
import { endianness } from 'node:os';
import type { SpeechAudio } from '../engine/speech-engine';

export const WAV_CONTENT_TYPE = 'audio/wav';
const HEADER_BYTES = 44;

export function encodeWav({ sampleRate, samples }: SpeechAudio): Buffer {
  const dataBytes = samples.length * 2;
  const wav = Buffer.alloc(HEADER_BYTES + dataBytes);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(HEADER_BYTES - 8 + dataBytes, 4); // everything after this field
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
  if (endianness() === 'LE') wav.set(new Uint8Array(samples.buffer, samples.byteOffset, dataBytes), HEADER_BYTES);
  else for (let i = 0; i < samples.length; i++) wav.writeInt16LE(samples[i], HEADER_BYTES + i * 2); // WAV is little-endian

  return wav;
}

export const durationMs = ({ sampleRate, samples }: SpeechAudio) => Math.round((samples.length * 1000) / sampleRate);
