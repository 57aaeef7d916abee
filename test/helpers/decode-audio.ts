// Decodes MP3, Ogg Opus and FLAC with independent decoders from npm (mpg123, libopus and libFLAC
// compiled to WebAssembly by the wasm-audio-decoders project), for tests that check what the
// encoders made. The decoders are ES modules: they run in a thread of their own, outside jest's
// module loader, where import() is native.
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface Decoded {
  sampleRate: number;
  /** The first channel, -1 to 1. */
  samples: Float32Array;
}

const MODULES = {
  mp3: { module: 'mpg123-decoder', decoder: 'MPEGDecoder' },
  opus: { module: 'ogg-opus-decoder', decoder: 'OggOpusDecoder' },
  flac: { module: '@wasm-audio-decoders/flac', decoder: 'FLACDecoder' },
} as const;

function decodeThread() {
  const { parentPort, workerData } = require('node:worker_threads');
  const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<any>;
  (async () => {
    const mod = await importModule(workerData.url);
    const decoder = new mod[workerData.decoder]();
    await decoder.ready;
    const bytes = new Uint8Array(workerData.bytes);
    const out = workerData.decoder === 'MPEGDecoder' ? decoder.decode(bytes) : await decoder.decodeFile(bytes);
    const errors = out.errors ?? [];
    decoder.free();
    const samples = out.channelData[0] ?? new Float32Array(0);
    parentPort.postMessage({ sampleRate: out.sampleRate, samples, errors: errors.length }, [samples.buffer]);
  })().catch((err: Error) => parentPort.postMessage({ error: String(err?.stack ?? err) }));
}

export function decodeAudio(format: keyof typeof MODULES, bytes: Uint8Array): Promise<Decoded & { errors: number }> {
  const { module, decoder } = MODULES[format];
  const url = pathToFileURL(require.resolve(module)).href;
  const worker = new Worker(`(${decodeThread.toString()})()`, {
    eval: true,
    workerData: { url, decoder, bytes: Uint8Array.from(bytes).buffer },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => {
      void worker.terminate();
      if (m.error) reject(new Error(m.error));
      else resolve(m);
    });
    worker.once('error', reject);
  });
}

/** Root mean square of samples from -1 to 1, scaled to 16-bit units (as rms() of WAV samples). */
export function floatRms(samples: Float32Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s * 32768 * 32768;
  return samples.length ? Math.sqrt(sum / samples.length) : 0;
}
