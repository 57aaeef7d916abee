// eSpeak NG, from @echogarden/espeak-ng-emscripten (GPL-3.0: see the README). The engine is
// WebAssembly with 24 MB of voice data, loaded on first use in worker threads of its own, so
// that loading it and synthesis never run on the event loop that serves requests, and routes
// that do not need it never pay for it. Each thread renders one text at a time.
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { blendVariantFiles, parseBlend } from './blend';
import type { BaseVoice, SpeechAudio, SpeechEngine, SpeechLimits, SpeechRequest } from './speech-engine';
import { wordTimings } from './word-timings';
import { createResampler } from './resample';
import { createTimeStretch } from './time-stretch';
import { createAudioEncoder } from '../audio/encoders';
import { encoderModulePaths, loadEncoderLibraries } from '../audio/encoder-libraries';

interface Catalog {
  languages: string[];
  /** The voice file that speaks each language best: what `set_voice` is given. */
  languageVoices: Record<string, string>;
  variants: { name: string; displayName: string; gender: string | null; text: string }[];
}

/** eSpeak NG's normal rate, and the range it speaks (it clamps to it). */
export const NORMAL_WPM = 175;
export const MIN_WPM = 80;
export const MAX_WPM = 450;

export const wordsPerMinute = (speed: number) => Math.min(MAX_WPM, Math.max(MIN_WPM, Math.round(NORMAL_WPM * speed)));

/** How much faster than eSpeak NG's rendering the audio must play to reach `speed` (1 within the engine's range). */
export const stretchTempo = (speed: number) => speed / (wordsPerMinute(speed) / NORMAL_WPM);

/**
 * The worker's code. It runs in a thread of its own (outside any module loader of the
 * caller, so the engine's ES module is imported natively); it must use nothing from this file.
 */
function espeakThread() {
  const { parentPort, workerData } = require('node:worker_threads');
  const VARIANTS = '/usr/share/espeak-ng-data/voices/!v';
  // A native import(): TypeScript would turn the keyword into require(), which cannot load ES modules.
  const importModule = new Function('url', 'return import(url)') as (
    url: string,
  ) => Promise<{ default: () => Promise<any> }>;
  const loading = importModule(workerData.moduleUrl).then(async (mod) => {
    const m = await mod.default();
    return { m, speaker: new m.eSpeakNGWorker() };
  });
  // SoundTouch's WSOLA, loaded when a speed first needs it; the stretch and resampling stages are
  // the source of time-stretch.ts and resample.ts, put beside this one.
  let stretcher: Promise<any> | undefined;
  const newStretch = (globalThis as any).__createTimeStretch as typeof createTimeStretch;
  const newResampler = (globalThis as any).__createResampler as typeof createResampler;

  async function catalog() {
    const { m, speaker } = await loading;
    const languageVoices: Record<string, { voice: string; priority: number }> = {};
    for (const v of speaker.list_voices() as {
      identifier: string;
      languages: { name: string; priority: number }[];
    }[]) {
      for (const l of v.languages) {
        const tag = l.name.toLowerCase();
        if (!languageVoices[tag] || l.priority < languageVoices[tag].priority)
          languageVoices[tag] = { voice: v.identifier, priority: l.priority };
      }
    }
    const variants = [];
    for (const file of m.FS.readdir(VARIANTS) as string[]) {
      // Names that can stand in a blend expression; a few files have spaces in their names.
      if (!/^[A-Za-z0-9_-]+$/.test(file)) continue;
      const text: string = m.FS.readFile(`${VARIANTS}/${file}`, { encoding: 'utf8' });
      const name = /^name\s+(.+)$/m.exec(text)?.[1].trim() ?? file;
      const gender = /^gender\s+(female|male)/m.exec(text)?.[1] ?? null;
      variants.push({ name: file, displayName: name, gender, text });
    }
    return {
      languages: Object.keys(languageVoices).sort(),
      languageVoices: Object.fromEntries(Object.entries(languageVoices).map(([tag, v]) => [tag, v.voice])),
      variants,
    };
  }

  // The encoders' libraries, loaded when a format first needs them (see audio/encoders.ts).
  let encoderLibraries: Promise<any> | undefined;
  const newEncoder = (globalThis as any).__createAudioEncoder as typeof createAudioEncoder;
  function loadEncoders(): Promise<any> {
    encoderLibraries ??= (globalThis as any).__loadEncoderLibraries(workerData.encoders, newResampler);
    return encoderLibraries!;
  }

  const written = new Set<string>();
  /**
   * Renders the text. eSpeak NG hands its audio over in pieces (about 100 ms each) as it renders;
   * each goes through the stretch (when the speed needs one) and the resampler (when another
   * rate is wanted), the encoder (when a format is asked for) and, with `stream`, straight to the
   * caller as an `audio` message of this call, while the engine goes on. Without `stream` the
   * pieces are gathered into the answer. The engine's word and sentence events come back with
   * the answer: [text position (1-based code points), length, time in ms of the rendered audio].
   */
  async function synthesize(
    args: {
      text: string;
      voice: string;
      variant: string;
      variantFile?: string;
      wpm: number;
      tempo: number;
      sampleRate?: number;
      stream?: boolean;
      encode?: 'mp3' | 'opus' | 'flac';
      maxSeconds: number;
      stop: SharedArrayBuffer;
    },
    id: number,
  ) {
    const stop = new Int32Array(args.stop);
    const { m, speaker } = await loading;
    const libs = args.encode ? await loadEncoders() : undefined;
    if (args.variantFile !== undefined && !written.has(args.variant)) {
      m.FS.writeFile(`${VARIANTS}/${args.variant}`, args.variantFile);
      written.add(args.variant);
    }
    // eSpeak NG ignores an unknown variant silently; the caller only names known or written ones.
    const status = speaker.set_voice(`${args.voice}+${args.variant}`);
    if (status !== 0) throw new Error(`voice "${args.voice}+${args.variant}" was refused (${status})`);
    speaker.set_rate(args.wpm);
    const rate: number = speaker.get_samplerate();
    const outRate = args.sampleRate ?? rate;
    const stages: { push(s: Int16Array): Int16Array; finish(): Int16Array }[] = [];
    if (Math.abs(args.tempo - 1) > 1e-6) {
      stretcher ??= importModule(workerData.soundtouchUrl).then((mod: any) => mod.Stretch);
      stages.push(newStretch(rate, args.tempo, await stretcher));
    }
    if (outRate !== rate) stages.push(newResampler(rate, outRate));
    const lame = args.encode === 'mp3' ? await libs.createMp3Encoder() : undefined;
    const encoder = args.encode ? newEncoder(args.encode, outRate, libs, lame) : undefined;
    const chunks: Int16Array[] = [];
    const encoded: Uint8Array[] = [];
    let out = 0;
    const emit = (samples: Int16Array, last: boolean) => {
      let bytes = encoder ? encoder.push(samples) : undefined;
      if (encoder && last) {
        const rest = encoder.finish();
        if (rest.length) {
          const all = new Uint8Array(bytes!.length + rest.length);
          all.set(bytes!);
          all.set(rest, bytes!.length);
          bytes = all;
        }
      }
      if (!samples.length && !bytes?.length) return;
      out += samples.length;
      if (args.stream) {
        const transfer = [samples.buffer];
        if (bytes?.length) transfer.push(bytes.buffer);
        parentPort.postMessage({ id, audio: samples, encoded: bytes, sampleRate: outRate }, transfer);
      } else {
        chunks.push(samples);
        if (bytes?.length) encoded.push(bytes);
      }
    };
    /** Through every stage; `last`: the input has ended, so each stage gives what it holds. */
    const pipe = (samples: Int16Array, last: boolean) => {
      let s = samples;
      for (const stage of stages) {
        const pushed = stage.push(s);
        if (!last) s = pushed;
        else {
          const rest = stage.finish();
          s = new Int16Array(pushed.length + rest.length);
          s.set(pushed);
          s.set(rest, pushed.length);
        }
      }
      emit(s === samples ? samples.slice() : s, last); // a copy of the engine's piece: it is a view of its memory
    };
    // The limit is on the audio as delivered: stretched by 1/tempo after rendering.
    const maxSamples = args.maxSeconds * rate * args.tempo;
    let length = 0;
    // The engine's callback, read straight from its memory: the audio as a view (copied once,
    // by the first stage or by pipe), and of the events only words and sentences (the package's
    // own wrapper copies every piece and decodes every phoneme event's name as a string).
    const words: number[] = [];
    const sentences: number[] = [];
    const eventSize: number = speaker.getSizeOfEventStruct_();
    const [WORD, SENTENCE, TERMINATED] = [m.espeakEVENT_WORD, m.espeakEVENT_SENTENCE, m.espeakEVENT_LIST_TERMINATED];
    const callback = (audioPtr: number, count: number, eventsPtr: number) => {
      const heap32: Int32Array = m.HEAP32;
      // espeak_EVENT: type, unique_identifier, text_position, length, audio_position (ms), …
      for (let p = eventsPtr >> 2; heap32[p] !== TERMINATED; p += eventSize >> 2) {
        if (heap32[p] === WORD) words.push(heap32[p + 2], heap32[p + 3], heap32[p + 4]);
        else if (heap32[p] === SENTENCE) sentences.push(heap32[p + 2], 0, heap32[p + 4]);
      }
      if (!count) return 0;
      length += count;
      if (length > maxSamples || Atomics.load(stop, 0) === 1) return 1; // 1 stops the engine
      pipe(m.HEAP16.subarray(audioPtr >> 1, (audioPtr >> 1) + count), false);
      return 0;
    };
    const pointer = m.addFunction(callback, 'iiii');
    try {
      speaker.synth_(args.text, pointer);
    } finally {
      m.removeFunction(pointer);
    }
    if (Atomics.load(stop, 0) === 1) throw new Error('canceled');
    if (length > maxSamples)
      throw new Error(`the speech would last more than ${args.maxSeconds} seconds; split the text`);
    pipe(new Int16Array(0), true);
    const samples = new Int16Array(args.stream ? 0 : out) as Int16Array<ArrayBufferLike>;
    let at = 0;
    for (const c of chunks) {
      samples.set(c, at);
      at += c.length;
    }
    chunks.length = 0;
    const result = {
      sampleRate: outRate,
      samples,
      encoded: encoded.length ? encoded : undefined,
      encodedPatch: encoder?.patch() ?? undefined,
      // Times of the rendered audio: the caller scales them by the stretch.
      words,
      sentences,
      outSamples: out,
    };
    return { result, transfer: [samples.buffer] };
  }

  const ops: Record<string, (args: any, id: number) => Promise<unknown>> = { catalog, synthesize };
  parentPort.on('message', async ({ id, op, args }: { id: number; op: string; args: unknown }) => {
    try {
      const answer = (await ops[op](args, id)) as { result?: unknown; transfer?: ArrayBuffer[] };
      if (answer && typeof answer === 'object' && 'transfer' in answer)
        parentPort.postMessage({ id, result: answer.result }, answer.transfer);
      else parentPort.postMessage({ id, result: answer });
    } catch (err) {
      parentPort.postMessage({ id, error: String((err as Error)?.message ?? err) });
    }
  });
}

/** What the thread answers: the audio, and the engine's word and sentence events as rendered. */
type RenderedSpeech = Omit<SpeechAudio, 'timings'> & { words: number[]; sentences: number[]; outSamples: number };

/** One engine thread and the calls it has not answered yet. */
class EngineThread {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    {
      resolve(v: unknown): void;
      reject(e: Error): void;
      onAudio?(samples: Int16Array, sampleRate: number, encoded?: Uint8Array): void;
    }
  >();
  dead = false;

  constructor(moduleUrl: string, soundtouchUrl: string) {
    const source = [
      `globalThis.__createTimeStretch = ${createTimeStretch.toString()};`,
      `globalThis.__createResampler = ${createResampler.toString()};`,
      `globalThis.__createAudioEncoder = ${createAudioEncoder.toString()};`,
      `globalThis.__loadEncoderLibraries = ${loadEncoderLibraries.toString()};`,
      `(${espeakThread.toString()})()`,
    ].join('\n');
    this.worker = new Worker(source, {
      eval: true,
      workerData: { moduleUrl, soundtouchUrl, encoders: encoderModulePaths() },
    });
    this.worker.unref();
    this.worker.on(
      'message',
      ({
        id,
        result,
        error,
        audio,
        encoded,
        sampleRate,
      }: {
        id: number;
        result?: unknown;
        error?: string;
        audio?: Int16Array;
        encoded?: Uint8Array;
        sampleRate?: number;
      }) => {
        const p = this.pending.get(id);
        if (audio) {
          // A piece of a call still rendering: an exception of the listener must not stop the others.
          try {
            p?.onAudio?.(audio, sampleRate!, encoded);
          } catch {
            /* the caller's concern */
          }
          return;
        }
        this.pending.delete(id);
        if (error !== undefined) p?.reject(new Error(`speech engine: ${error}`));
        else p?.resolve(result);
      },
    );
    // A dead thread fails what it held; the engine replaces it on the next call.
    const fail = (err: Error) => {
      this.dead = true;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`speech engine thread exited with ${code}`)));
  }

  get load(): number {
    return this.pending.size;
  }

  call<T>(
    op: string,
    args?: unknown,
    onAudio?: (samples: Int16Array, sampleRate: number, encoded?: Uint8Array) => void,
  ): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve, reject, onAudio });
      this.worker.postMessage({ id, op, args });
    });
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}

export class EspeakEngine implements SpeechEngine {
  readonly name = 'eSpeak NG';
  readonly defaultLanguage = 'en-us';
  /** eSpeak NG renders at 22,050 Hz; other rates are resampled. */
  readonly sampleRate = 22050;
  private readonly threads: EngineThread[] = [];
  private catalog?: Promise<Catalog & { variantFiles: Map<string, string> }>;
  private voices?: Promise<BaseVoice[]>;

  /** `threads`: how many texts may be rendered at once (each thread holds its own engine). */
  constructor(private readonly maxThreads = 1) {}

  /** The least busy thread, starting one while fewer than `maxThreads` run. */
  private thread(): EngineThread {
    for (let i = this.threads.length - 1; i >= 0; i--) if (this.threads[i].dead) this.threads.splice(i, 1);
    const idle = this.threads.find((t) => t.load === 0);
    if (idle) return idle;
    if (this.threads.length < Math.max(1, this.maxThreads)) {
      const moduleUrl = pathToFileURL(require.resolve('@echogarden/espeak-ng-emscripten')).href;
      const thread = new EngineThread(moduleUrl, pathToFileURL(require.resolve('soundtouchjs')).href);
      this.threads.push(thread);
      return thread;
    }
    return this.threads.reduce((a, b) => (b.load < a.load ? b : a));
  }

  /** The catalog, with each variant's file text by lower-cased name (what blends are made of). */
  private loadCatalog() {
    this.catalog ??= this.thread()
      .call<Catalog>('catalog')
      .then((catalog) => ({
        ...catalog,
        variantFiles: new Map(catalog.variants.map((v) => [v.name.toLowerCase(), v.text])),
      }))
      .catch((err) => {
        this.catalog = this.voices = undefined; // try again on the next request
        throw err;
      });
    return this.catalog;
  }

  async languages(): Promise<string[]> {
    return (await this.loadCatalog()).languages;
  }

  baseVoices(): Promise<BaseVoice[]> {
    this.voices ??= this.loadCatalog().then(({ languages, variants }) =>
      // eSpeak NG's variants are timbres that apply to every language it speaks.
      variants.map((v) => ({
        name: v.name,
        displayName: v.displayName,
        gender: v.gender === 'female' || v.gender === 'male' ? v.gender : null,
        languages,
        description: `eSpeak NG voice variant "${v.displayName}"${v.gender ? ` (${v.gender})` : ''}; speaks every eSpeak NG language.`,
      })),
    );
    return this.voices;
  }

  async synthesize(request: SpeechRequest, limits: SpeechLimits): Promise<SpeechAudio> {
    const { languageVoices, variantFiles: files } = await this.loadCatalog();
    const voice = Object.hasOwn(languageVoices, request.language) ? languageVoices[request.language] : undefined;
    if (!voice) throw new Error(`"${request.language}" is not a language of the speech engine`);
    let variant = request.baseVoice;
    let variantFile: string | undefined;
    if (request.voiceBlend) {
      const parsed = parseBlend(request.voiceBlend);
      if ('problems' in parsed) throw new Error(`voice blend "${request.voiceBlend}": ${parsed.problems.join('; ')}`);
      const parts = parsed.parts.map((p) => {
        const text = files.get(p.voice.toLowerCase());
        if (text === undefined) throw new Error(`"${p.voice}" is not a base voice of the speech engine`);
        return { text, weight: p.weight };
      });
      // Named by its content: the same blend is written once per thread and reused.
      variant = `blend-${createHash('sha256').update(request.voiceBlend.toLowerCase()).digest('hex').slice(0, 16)}`;
      variantFile = blendVariantFiles(variant, parts);
    } else if (!files.has(variant.toLowerCase())) {
      throw new Error(`"${variant}" is not a base voice of the speech engine`);
    }
    // The thread renders synchronously and reads no messages meanwhile: a canceled job is told
    // through shared memory, which the engine's chunk callback reads.
    const stop = new SharedArrayBuffer(4);
    const { signal } = limits;
    signal?.throwIfAborted();
    const abort = () => Atomics.store(new Int32Array(stop), 0, 1);
    signal?.addEventListener('abort', abort, { once: true });
    try {
      const tempo = stretchTempo(request.speed);
      const rendered = await this.thread().call<RenderedSpeech>(
        'synthesize',
        {
          text: request.text,
          voice,
          variant,
          variantFile,
          wpm: wordsPerMinute(request.speed),
          tempo,
          sampleRate: limits.sampleRate,
          stream: !!limits.onAudio,
          encode: limits.encode,
          maxSeconds: limits.maxSeconds,
          stop,
        },
        limits.onAudio,
      );
      const { words, sentences, outSamples, ...audio } = rendered;
      const durationMs = (outSamples * 1000) / rendered.sampleRate;
      return { ...audio, timings: wordTimings(request.text, words, sentences, tempo, durationMs) };
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }

  async stop(): Promise<void> {
    const threads = this.threads.splice(0);
    this.catalog = this.voices = undefined;
    await Promise.all(threads.map((t) => t.terminate()));
  }
}
