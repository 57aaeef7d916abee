// eSpeak NG, from @echogarden/espeak-ng-emscripten (GPL-3.0: see the README). The engine is
// WebAssembly with 24 MB of voice data; it is loaded once, on first use, in a worker thread
// of its own, so that loading it (and, later, synthesis) never runs on the event loop that
// serves requests, and routes that do not need it never pay for it.
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import type { BaseVoice, SpeechEngine } from './speech-engine';

interface Catalog {
  languages: string[];
  variants: { name: string; displayName: string; gender: string | null }[];
}

/**
 * The worker's code. It runs in a thread of its own (outside any module loader of the
 * caller, so the engine's ES module is imported natively); it must use nothing from this file.
 */
function espeakThread() {
  const { parentPort, workerData } = require('node:worker_threads');
  const VARIANTS = '/usr/share/espeak-ng-data/voices/!v';
  // A native import(): TypeScript would turn the keyword into require(), which cannot load ES modules.
  const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<{ default: () => Promise<any> }>;
  const loading = importModule(workerData.moduleUrl).then((mod) => mod.default());

  async function catalog() {
    const m = await loading;
    const worker = new m.eSpeakNGWorker();
    const languages = new Set<string>();
    for (const v of worker.list_voices() as { languages: { name: string }[] }[]) for (const l of v.languages) languages.add(l.name.toLowerCase());
    const variants = [];
    for (const file of m.FS.readdir(VARIANTS) as string[]) {
      // Names that can stand in a blend expression; a few files have spaces in their names.
      if (!/^[A-Za-z0-9_-]+$/.test(file)) continue;
      const text: string = m.FS.readFile(`${VARIANTS}/${file}`, { encoding: 'utf8' });
      const name = /^name\s+(.+)$/m.exec(text)?.[1].trim() ?? file;
      const gender = /^gender\s+(female|male)/m.exec(text)?.[1] ?? null;
      variants.push({ name: file, displayName: name, gender });
    }
    return { languages: [...languages].sort(), variants };
  }

  const ops: Record<string, (args: any) => Promise<unknown>> = { catalog };
  parentPort.on('message', async ({ id, op, args }: { id: number; op: string; args: unknown }) => {
    try {
      parentPort.postMessage({ id, result: await ops[op](args) });
    } catch (err) {
      parentPort.postMessage({ id, error: String((err as Error)?.message ?? err) });
    }
  });
}

export class EspeakEngine implements SpeechEngine {
  readonly name = 'eSpeak NG';
  readonly defaultLanguage = 'en-us';
  private worker?: Worker;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private catalog?: Promise<Catalog>;
  private voices?: Promise<BaseVoice[]>;

  private call<T>(op: string, args?: unknown): Promise<T> {
    if (!this.worker) {
      const moduleUrl = pathToFileURL(require.resolve('@echogarden/espeak-ng-emscripten')).href;
      const worker = new Worker(`(${espeakThread.toString()})()`, { eval: true, workerData: { moduleUrl } });
      worker.unref();
      worker.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: string }) => {
        const p = this.pending.get(id);
        this.pending.delete(id);
        if (error !== undefined) p?.reject(new Error(`speech engine: ${error}`));
        else p?.resolve(result);
      });
      // A dead worker fails what it held; the next call starts a new one.
      const fail = (err: Error) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        if (this.worker === worker) this.worker = undefined;
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`speech engine worker exited with ${code}`)));
      this.worker = worker;
    }
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker!.postMessage({ id, op, args });
    });
  }

  private loadCatalog(): Promise<Catalog> {
    this.catalog ??= this.call<Catalog>('catalog').catch((err) => {
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

  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.catalog = this.voices = undefined;
    await worker?.terminate();
  }
}
