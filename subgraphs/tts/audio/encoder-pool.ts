// Encodes stored syntheses into other formats (GET /api/v1/tts/syntheses/{id}/audio?format=mp3),
// in a bounded pool of worker threads of the serving process: a tts subgraph without synthesis
// workers serves them too, and the event loop only moves bytes (the WAV read from the store in
// pieces, each piece's encoding appended to the cached file as it comes, so the first request
// is answered while it encodes). The encoders are those the engine threads run (encoders.ts).
import { Worker } from 'node:worker_threads';
import { createResampler } from '../engine/resample';
import type { AudioStore } from './audio-store';
import { createAudioEncoder, EncodedFormat } from './encoders';
import { encoderModulePaths, loadEncoderLibraries } from './encoder-libraries';
import { WAV_HEADER_BYTES } from './wav';

/** The samples read (and encoded) at a time: 128 KiB of WAV, under 3 s of audio. */
const PIECE_BYTES = 128 * 1024;

function encoderThread() {
  const { parentPort, workerData } = require('node:worker_threads');
  const g = globalThis as any;
  const libraries = g.__loadEncoderLibraries(workerData.encoders, g.__createResampler);
  const encoders = new Map<number, any>();
  parentPort.on(
    'message',
    async (m: {
      id: number;
      op: 'open' | 'push' | 'finish';
      format?: string;
      sampleRate?: number;
      samples?: Int16Array;
    }) => {
      try {
        if (m.op === 'open') {
          const libs = await libraries;
          const lame = m.format === 'mp3' ? await libs.createMp3Encoder() : undefined;
          encoders.set(m.id, g.__createAudioEncoder(m.format, m.sampleRate, libs, lame));
          return parentPort.postMessage({ id: m.id });
        }
        const encoder = encoders.get(m.id);
        if (m.op === 'push') {
          const bytes: Uint8Array = encoder.push(m.samples);
          return parentPort.postMessage({ id: m.id, bytes }, [bytes.buffer]);
        }
        encoders.delete(m.id);
        const bytes: Uint8Array = encoder.finish();
        parentPort.postMessage({ id: m.id, bytes, patch: encoder.patch() }, [bytes.buffer]);
      } catch (err) {
        encoders.delete(m.id);
        parentPort.postMessage({ id: m.id, error: String((err as Error)?.message ?? err) });
      }
    },
  );
}

interface Answer {
  bytes?: Uint8Array;
  patch?: { offset: number; bytes: Uint8Array } | null;
}

class EncoderThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve(a: Answer): void; reject(e: Error): void }>();
  /** Encodings this thread holds. */
  jobs = 0;
  dead = false;

  constructor() {
    const source = [
      `globalThis.__createResampler = ${createResampler.toString()};`,
      `globalThis.__createAudioEncoder = ${createAudioEncoder.toString()};`,
      `globalThis.__loadEncoderLibraries = ${loadEncoderLibraries.toString()};`,
      `(${encoderThread.toString()})()`,
    ].join('\n');
    this.worker = new Worker(source, { eval: true, workerData: { encoders: encoderModulePaths() } });
    this.worker.unref();
    this.worker.on('message', (m: Answer & { id: number; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(`audio encoder: ${m.error}`));
      else w?.resolve(m);
    });
    const fail = (err: Error) => {
      this.dead = true;
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`audio encoder thread exited with ${code}`)));
  }

  /** One step of encoding `id`; steps of one id are sent in order and answered in order. */
  ask(id: number, message: object, transfer: ArrayBuffer[] = []): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message }, transfer);
    });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

export class EncoderPool {
  private readonly threads: EncoderThread[] = [];
  private nextId = 0;

  /** `size`: AUDIO_ENCODER_THREADS, the most threads encoding at once (each takes several jobs in turn). */
  constructor(private readonly size: number) {}

  private thread(): EncoderThread {
    for (let i = this.threads.length - 1; i >= 0; i--) if (this.threads[i].dead) this.threads.splice(i, 1);
    const idle = this.threads.find((t) => t.jobs === 0);
    if (idle) return idle;
    if (this.threads.length < Math.max(1, this.size)) {
      const thread = new EncoderThread();
      this.threads.push(thread);
      return thread;
    }
    return this.threads.reduce((a, b) => (b.jobs < a.jobs ? b : a));
  }

  /**
   * Encodes the WAV stored under `wavKey` into `format`, written piece by piece under
   * `partialKey` (readable while it grows) and published under `key` at the end. Answers the
   * encoding's size.
   */
  async encode(
    store: AudioStore,
    wavKey: string,
    format: EncodedFormat,
    partialKey: string,
    key: string,
  ): Promise<number> {
    const header = await store.read(wavKey, 0, WAV_HEADER_BYTES);
    if (!header || header.length < WAV_HEADER_BYTES) throw new Error(`no audio under ${wavKey}`);
    const sampleRate = header.readUInt32LE(24);
    const thread = this.thread();
    const id = this.nextId++;
    thread.jobs++;
    const writer = await store.begin(partialKey);
    try {
      await thread.ask(id, { op: 'open', format, sampleRate });
      for (let offset = WAV_HEADER_BYTES; ; offset += PIECE_BYTES) {
        const piece = await store.read(wavKey, offset, PIECE_BYTES);
        if (!piece?.length) break;
        // Aligned copy: the samples travel to the thread.
        const samples = new Int16Array(piece.length >> 1);
        Buffer.from(samples.buffer).set(piece.subarray(0, samples.length * 2));
        const { bytes } = await thread.ask(id, { op: 'push', samples }, [samples.buffer]);
        if (bytes?.length) await writer.append(bytes);
        if (piece.length < PIECE_BYTES) break;
      }
      const { bytes, patch } = await thread.ask(id, { op: 'finish' });
      if (bytes?.length) await writer.append(bytes);
      return await writer.commit(key, patch ?? undefined);
    } catch (err) {
      await writer.abort().catch(() => undefined);
      throw err;
    } finally {
      thread.jobs--;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.threads.splice(0).map((t) => t.terminate()));
  }
}
