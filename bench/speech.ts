// `npm run bench -- speech`: what OpenAI-style speech costs, per speed.
//
// 1. The engine alone, in this process (eSpeak NG in its worker thread, as the synthesis worker
//    runs it): time to the first piece of audio, and CPU per second of audio (the process's CPU
//    while nothing else runs in it, so the engine thread's), for the render with the stretch
//    and the 24 kHz resampling of each speed; then the stretch and the resampler alone on the
//    rendered audio (this thread's CPU), which is what a speed beyond 0.46–2.57 adds.
// 2. Through the server (a child process, one worker): POST /v1/audio/speech with pcm, the
//    client's time to first byte and to the last, the real-time factor (wall time over audio
//    time), and whether the synthesis was still running at the first byte (it streams).
// 3. The engine against native eSpeak NG (`espeak-ng`, installed for the bench only: apt-get
//    install espeak-ng) on the same ~27,000-character text at speed 1: CPU per second of audio
//    of the package's own synthesize() (which copies each piece and decodes every event), of the
//    engine thread's direct read of its memory (what runs), and of the native program, in turns.
// 4. Each format: the encoders' CPU per second of audio (this thread, on rendered 24 kHz audio,
//    in the engine's pieces), and POST /v1/audio/speech's time to first byte per format.
//
// Short by default; BENCH_SPEECH_REPEAT (text length, in sentences of ~90 characters, default 12)
// and BENCH_SPEECH_ROUNDS (default 2, the median is shown) make it longer. BENCH_DB: sqlite
// (default) or mysql. Wall-clock figures depend on the machine's load; CPU figures less so.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createAudioEncoder, ENCODED_FORMATS } from '../subgraphs/tts/audio/encoders';
import { encoderModulePaths, loadEncoderLibraries } from '../subgraphs/tts/audio/encoder-libraries';
import { EspeakEngine, stretchTempo, wordsPerMinute } from '../subgraphs/tts/engine/espeak';
import { createResampler } from '../subgraphs/tts/engine/resample';
import { createTimeStretch, StretchClass } from '../subgraphs/tts/engine/time-stretch';
import { benchEnv, median, postJson, printTable, startBenchServer } from './harness';

const SENTENCE = 'Speech synthesis turns written text into sound, one sentence after another, at any speed. ';
const REPEAT = Number(process.env.BENCH_SPEECH_REPEAT ?? 12);
const ROUNDS = Math.max(1, Number(process.env.BENCH_SPEECH_ROUNDS ?? 2));
const SPEEDS = [0.25, 0.5, 1, 2, 3, 4];
const RATE = 24_000;

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<any>;

/** Pieces through a stage as the engine hands them over; the stage's CPU in ms. */
function timeStage(
  pieces: Int16Array[],
  stage: { push(s: Int16Array): Int16Array; finish(): Int16Array },
): { cpuMs: number; samples: number } {
  const start = cpuNow();
  let samples = 0;
  for (const p of pieces) samples += stage.push(p).length;
  samples += stage.finish().length;
  return { cpuMs: cpuNow() - start, samples };
}

async function engineCosts(): Promise<Record<string, string | number>[]> {
  const engine = new EspeakEngine(1);
  const Stretch = (await importModule(pathToFileURL(require.resolve('soundtouchjs')).href)).Stretch as StretchClass;
  const text = SENTENCE.repeat(REPEAT);
  const request = (speed: number) => ({ text, baseVoice: 'f3', voiceBlend: null, language: 'en-us', speed });
  // Warm: the engine's WebAssembly and voice data load on first use.
  await engine.synthesize({ ...request(1), text: 'Warm up.' }, { maxSeconds: 60 });
  const rows: Record<string, string | number>[] = [];
  for (const speed of SPEEDS) {
    const first: number[] = [];
    const cpuPerAudioS: number[] = [];
    const rtf: number[] = [];
    let audioS = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let firstAt = 0;
      let samples = 0;
      const wallStart = performance.now();
      const cpuStart = cpuNow();
      await engine.synthesize(request(speed), {
        maxSeconds: 3600,
        sampleRate: RATE,
        onAudio: (piece) => {
          firstAt ||= performance.now();
          samples += piece.length;
        },
      });
      const wall = performance.now() - wallStart;
      audioS = samples / RATE;
      first.push(firstAt - wallStart);
      cpuPerAudioS.push((cpuNow() - cpuStart) / audioS);
      rtf.push(wall / 1000 / audioS);
    }
    // The stretch and the resampler alone, on this speed's unstretched render (22,050 Hz, in the engine's pieces).
    const pieces: Int16Array[] = [];
    const tempo = stretchTempo(speed);
    await engine.synthesize(
      { ...request(speed), speed: wordsPerMinute(speed) / 175 },
      { maxSeconds: 3600, onAudio: (p) => void pieces.push(p) },
    );
    const stretched = Math.abs(tempo - 1) > 1e-6 ? timeStage(pieces, createTimeStretch(22050, tempo, Stretch)) : null;
    const resampled = timeStage(pieces, createResampler(22050, RATE));
    const renderedS = pieces.reduce((n, p) => n + p.length, 0) / 22050;
    rows.push({
      speed,
      'eSpeak wpm': wordsPerMinute(speed),
      'stretch tempo': tempo.toFixed(3),
      'audio s': audioS.toFixed(1),
      'first piece ms': Math.round(median(first)),
      'RTF (wall/audio)': median(rtf).toFixed(3),
      'engine CPU ms per audio s': Math.round(median(cpuPerAudioS)),
      'stretch CPU ms per audio s': stretched ? Math.round(stretched.cpuMs / (stretched.samples / 22050)) : '–',
      'resample CPU ms per audio s': Math.round(resampled.cpuMs / renderedS),
    });
  }
  await engine.stop();
  return rows;
}

async function endToEnd(db: 'sqlite' | 'mysql'): Promise<Record<string, string | number>[]> {
  const server = await startBenchServer(benchEnv(db, { SYNTHESIS_CONCURRENCY: '1' }));
  const rows: Record<string, string | number>[] = [];
  try {
    const token = (await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' }))
      .body.access_token;
    const speak = async (speed: number, input: string) => {
      const start = performance.now();
      const res = await fetch(`${server.url}/v1/audio/speech`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input, speed, response_format: 'pcm' }),
      });
      if (res.status !== 200) throw new Error(`speech answered ${res.status}: ${await res.text()}`);
      const reader = res.body!.getReader();
      let ttfb = 0;
      let bytes = 0;
      let runningAtFirst = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!ttfb) {
          ttfb = performance.now() - start;
          const s = await fetch(`${server.url}/api/v1/tts/syntheses/${res.headers.get('x-synthesis-id')}`, {
            headers: { authorization: `Bearer ${token}` },
          });
          runningAtFirst = ((await s.json()) as { state: string }).state === 'running';
        }
        bytes += value.length;
      }
      return { ttfb, totalMs: performance.now() - start, audioS: bytes / 2 / RATE, runningAtFirst };
    };
    await speak(1, 'Warm up.');
    for (const speed of SPEEDS) {
      const results = [];
      for (let round = 0; round < ROUNDS; round++) results.push(await speak(speed, SENTENCE.repeat(REPEAT)));
      rows.push({
        database: db,
        speed,
        'audio s': results[0].audioS.toFixed(1),
        'TTFB ms': Math.round(median(results.map((r) => r.ttfb))),
        'last byte ms': Math.round(median(results.map((r) => r.totalMs))),
        'RTF (wall/audio)': median(results.map((r) => r.totalMs / 1000 / r.audioS)).toFixed(3),
        'running at first byte': `${results.filter((r) => r.runningAtFirst).length}/${results.length}`,
      });
    }
  } finally {
    await server.stop();
  }
  return rows;
}

/** CPU ms of this process's reaped children (Linux: /proc/self/stat's cutime + cstime, in clock ticks). */
function childrenCpuMs(): number {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

async function engineVersusNative(): Promise<Record<string, string | number>[]> {
  const text = SENTENCE.repeat(300);
  const file = path.join(os.tmpdir(), 'bench-speech-text.txt');
  fs.writeFileSync(file, text);
  const mod = await importModule(pathToFileURL(require.resolve('@echogarden/espeak-ng-emscripten')).href);
  const m = await mod.default();
  const speaker = new m.eSpeakNGWorker();
  speaker.set_voice('en-us+f3');
  speaker.set_rate(175);
  const rate = speaker.get_samplerate();
  const variants: Record<string, () => { cpuMs: number; audioS: number } | null> = {
    "package's synthesize()": () => {
      let samples = 0;
      const start = cpuNow();
      speaker.synthesize(text, (a: Int16Array) => ((samples += a.length), false));
      return { cpuMs: cpuNow() - start, audioS: samples / rate };
    },
    'direct read (the engine thread)': () => {
      let samples = 0;
      const heapEvents: number[] = [];
      const start = cpuNow();
      const pointer = m.addFunction((audio: number, count: number, events: number) => {
        const heap32: Int32Array = m.HEAP32;
        for (let p = events >> 2; heap32[p] !== m.espeakEVENT_LIST_TERMINATED; p += 9)
          if (heap32[p] === m.espeakEVENT_WORD) heapEvents.push(heap32[p + 2], heap32[p + 3], heap32[p + 4]);
        m.HEAP16.subarray(audio >> 1, (audio >> 1) + count);
        samples += count;
        return 0;
      }, 'iiii');
      speaker.synth_(text, pointer);
      m.removeFunction(pointer);
      return { cpuMs: cpuNow() - start, audioS: samples / rate };
    },
    'native espeak-ng': () => {
      const wav = path.join(os.tmpdir(), 'bench-speech-native.wav');
      const start = childrenCpuMs();
      const run = spawnSync('espeak-ng', ['-v', 'en-us+f3', '-s', '175', '-w', wav, '-f', file]);
      if (run.error || run.status !== 0) return null;
      const cpuMs = childrenCpuMs() - start;
      const audioS = (fs.statSync(wav).size - 44) / 2 / 22050;
      fs.rmSync(wav, { force: true });
      return { cpuMs, audioS };
    },
  };
  speaker.synthesize('Warm up.', () => false);
  const results: Record<string, { cpuMs: number; audioS: number }[]> = {};
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, measure] of Object.entries(variants)) {
      const r = measure();
      if (r) (results[name] ??= []).push(r);
    }
  const perS = (name: string) => median((results[name] ?? []).map((r) => r.cpuMs / r.audioS));
  const native = perS('native espeak-ng');
  return Object.keys(variants).map((name) => ({
    engine: name,
    characters: text.length,
    'audio s': results[name]?.[0]?.audioS.toFixed(0) ?? '–',
    'CPU s': results[name] ? (median(results[name].map((r) => r.cpuMs)) / 1000).toFixed(2) : '– (not installed)',
    'CPU ms per audio s': results[name] ? perS(name).toFixed(2) : '–',
    'ratio to native': results[name] && native ? (perS(name) / native).toFixed(2) : '–',
  }));
}

async function encoderCosts(): Promise<Record<string, string | number>[]> {
  const engine = new EspeakEngine(1);
  const pieces: Int16Array[] = [];
  await engine.synthesize(
    { text: SENTENCE.repeat(REPEAT), baseVoice: 'f3', voiceBlend: null, language: 'en-us', speed: 1 },
    { maxSeconds: 3600, sampleRate: RATE, onAudio: (p) => void pieces.push(p) },
  );
  await engine.stop();
  const audioS = pieces.reduce((n, p) => n + p.length, 0) / RATE;
  const libs = await loadEncoderLibraries(encoderModulePaths(), createResampler);
  const rows: Record<string, string | number>[] = [];
  for (const format of ENCODED_FORMATS) {
    const cpu: number[] = [];
    let bytes = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const start = cpuNow();
      const lame = format === 'mp3' ? await libs.createMp3Encoder() : undefined;
      const encoder = createAudioEncoder(format, RATE, libs, lame);
      bytes = 0;
      for (const p of pieces) bytes += encoder.push(p).length;
      bytes += encoder.finish().length;
      cpu.push(cpuNow() - start);
    }
    rows.push({
      format,
      'audio s': audioS.toFixed(1),
      'encode CPU ms per audio s': (median(cpu) / audioS).toFixed(2),
      'kbit/s': ((bytes * 8) / audioS / 1000).toFixed(1),
    });
  }
  return rows;
}

async function firstBytePerFormat(db: 'sqlite' | 'mysql'): Promise<Record<string, string | number>[]> {
  const server = await startBenchServer(benchEnv(db, { SYNTHESIS_CONCURRENCY: '1' }));
  const rows: Record<string, string | number>[] = [];
  try {
    const token = (await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' }))
      .body.access_token;
    const speak = async (format: string, input: string) => {
      const start = performance.now();
      const res = await fetch(`${server.url}/v1/audio/speech`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input, response_format: format }),
      });
      if (res.status !== 200) throw new Error(`speech answered ${res.status}: ${await res.text()}`);
      const reader = res.body!.getReader();
      let ttfb = 0;
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        ttfb ||= performance.now() - start;
        bytes += value.length;
      }
      return { ttfb, totalMs: performance.now() - start, bytes };
    };
    await speak('mp3', 'Warm up.');
    for (const format of ['mp3', 'opus', 'flac', 'wav', 'pcm']) {
      const results = [];
      for (let round = 0; round < ROUNDS; round++) results.push(await speak(format, SENTENCE.repeat(REPEAT)));
      rows.push({
        database: db,
        format,
        bytes: results[0].bytes,
        'TTFB ms': Math.round(median(results.map((r) => r.ttfb))),
        'last byte ms': Math.round(median(results.map((r) => r.totalMs))),
      });
    }
  } finally {
    await server.stop();
  }
  return rows;
}

export async function run(): Promise<void> {
  printTable(
    `The engine against native eSpeak NG (speed 1, 22,050 Hz, median of ${ROUNDS}, in turns; CPU of this thread or of the child)`,
    await engineVersusNative(),
  );
  printTable(`Encoders (this thread, 24 kHz mono in the engine's pieces, median of ${ROUNDS})`, await encoderCosts());
  const characters = SENTENCE.length * REPEAT;
  printTable(
    `Speech engine alone (${characters} characters, 24 kHz out, median of ${ROUNDS}; CPU is the process's, i.e. the engine thread's)`,
    await engineCosts(),
  );
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite']) as ('sqlite' | 'mysql')[];
  for (const db of dbs) {
    printTable(
      `POST /v1/audio/speech, pcm, through the one-process server (${characters} characters, one worker, median of ${ROUNDS})`,
      await endToEnd(db),
    );
    printTable(
      `POST /v1/audio/speech per format, speed 1 (${characters} characters, one worker, median of ${ROUNDS})`,
      await firstBytePerFormat(db),
    );
  }
}
