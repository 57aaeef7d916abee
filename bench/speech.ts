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
//
// Short by default; BENCH_SPEECH_REPEAT (text length, in sentences of ~90 characters, default 12)
// and BENCH_SPEECH_ROUNDS (default 2, the median is shown) make it longer. BENCH_DB: sqlite
// (default) or mysql. Wall-clock figures depend on the machine's load; CPU figures less so.
import { pathToFileURL } from 'node:url';
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

export async function run(): Promise<void> {
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
  }
}
