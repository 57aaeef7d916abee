// The synthesis job table under workers, on SQLite and on MySQL: each job runs exactly once
// however many workers compete, a job whose worker died is taken again after its lease, one
// that keeps killing workers is failed, and stop() hands unfinished jobs back. The engine is
// a stand-in that counts its calls (the real one is exercised in synthesis.test.ts); the
// database is real.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { createLogger } from '../../lib/logger';
import { OutboxEvent } from '../../lib/outbox';
import { ttsSubgraph } from '../../subgraphs/tts';
import { DiskAudioStore } from '../../subgraphs/tts/audio/audio-store';
import type { SpeechAudio, SpeechEngine, SpeechRequest } from '../../subgraphs/tts/engine/speech-engine';
import { Synthesis, SynthesisState } from '../../subgraphs/tts/entities/synthesis';
import { SynthesisOwner } from '../../subgraphs/tts/entities/synthesis-owner';
import { SynthesisService } from '../../subgraphs/tts/synthesis-service';
import { SynthesisWorker, SynthesisWorkerOptions } from '../../subgraphs/tts/synthesis-worker';
import { VoiceService } from '../../subgraphs/tts/voice-service';
import { cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { until } from '../helpers/wait';
import { audioDir } from '../../subgraphs/tts/settings';

const config = loadConfig({ ...isolatedEnv(), LOG_LEVEL: 'silent' });
const logger = createLogger(config);
const store = new DiskAudioStore(audioDir(config));
const open = () =>
  openDatabase(config, { name: 'tts', entities: ttsSubgraph.entities, migrations: ttsSubgraph.migrations });
let db: DataSource;
const extra: DataSource[] = [];

beforeAll(async () => {
  db = await open();
});
afterAll(async () => {
  for (const d of [db, ...extra]) if (d?.isInitialized) await d.destroy();
  await cleanupDatabases(config);
});
beforeEach(async () => {
  await db.manager.clear(Synthesis);
  await db.manager.clear(OutboxEvent);
  await db.manager.clear(SynthesisOwner);
});

/** Counts calls per text; `hold` keeps a call pending until released (a worker mid-job). */
class CountingEngine implements SpeechEngine {
  readonly name = 'stand-in';
  readonly defaultLanguage = 'en-us';
  readonly calls = new Map<string, number>();
  constructor(
    private readonly behaviour: (r: SpeechRequest) => Promise<SpeechAudio> = async () => ({
      sampleRate: 8000,
      samples: new Int16Array(800).fill(1000),
    }),
  ) {}
  baseVoices = async () => [];
  languages = async () => ['en-us'];
  async synthesize(request: SpeechRequest): Promise<SpeechAudio> {
    this.calls.set(request.text, (this.calls.get(request.text) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, Math.random() * 5));
    return this.behaviour(request);
  }
  stop = async () => {};
}

async function queue(count: number, fields: Partial<Synthesis> = {}): Promise<Synthesis[]> {
  const rows = Array.from({ length: count }, (_, i) =>
    db.manager.create(Synthesis, {
      id: uuidv7(),
      ownerId: uuidv7(),
      state: SynthesisState.QUEUED,
      voiceId: null,
      baseVoice: 'f3',
      voiceBlend: null,
      language: 'en-us',
      speed: 1,
      text: `job ${i} ${uuidv7()}`,
      characters: 10,
      durationMs: null,
      error: null,
      attempts: 0,
      workerId: null,
      leaseUntil: null,
      audioKey: null,
      audioBytes: null,
      createdAt: new Date(),
      startedAt: null,
      finishedAt: null,
      ...fields,
    }),
  );
  await db.manager.insert(Synthesis, rows);
  return rows;
}

/** The settings every worker here has unless a test says otherwise. */
const settings = {
  store,
  logger,
  concurrency: 1,
  leaseSeconds: 30,
  maxAttempts: 3,
  pollMs: 20,
  maxAudioSeconds: config.SYNTHESIS_MAX_AUDIO_SECONDS,
};

const workers: SynthesisWorker[] = [];
function worker(engine: SpeechEngine, options: Partial<SynthesisWorkerOptions> = {}): SynthesisWorker {
  const w = new SynthesisWorker({ ...settings, dataSource: db, engine, concurrency: 2, ...options });
  workers.push(w);
  return w;
}
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
});

/**
 * Holds each racer after its look for candidates until all `racers` have looked, so that they
 * all saw the same rows and race on the claim itself. `between` runs once, when all have
 * looked and before any claims (another writer acting in that moment).
 */
function allLookFirst(sources: DataSource[], racers: number, between: () => Promise<unknown> = async () => {}) {
  let looked = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  const spies = [...new Set(sources)].map((source) => {
    const find = source.manager.find.bind(source.manager);
    return jest.spyOn(source.manager, 'find').mockImplementation(async (...args: Parameters<typeof find>) => {
      const rows = await find(...args);
      if (++looked === racers) await between().then(release);
      await all;
      return rows;
    });
  });
  return () => spies.forEach((s) => s.mockRestore());
}

/** The real file functions, for spies that watch them. */
const realWriteFile = fsp.writeFile;
const realRename = fsp.rename;

const row = (id: string) => db.manager.findOneByOrFail(Synthesis, { id });

const allFinished = (ids: string[]) =>
  until(async () => {
    const rows: Synthesis[] = await db.manager.findBy(Synthesis, {});
    return (
      rows
        .filter((r) => ids.includes(r.id))
        .every((r) => r.state === SynthesisState.SUCCEEDED || r.state === SynthesisState.FAILED) && rows
    );
  });

describe('claiming', () => {
  it('gives a job to exactly one of many workers racing for it', async () => {
    // On MySQL each worker has a connection pool of its own, as separate processes would.
    const sources = TEST_DB === 'mysql' ? await Promise.all(Array.from({ length: 4 }, open)) : [db, db, db, db];
    extra.push(...sources.filter((s) => s !== db));
    for (let round = 0; round < 3; round++) {
      const [job] = await queue(1);
      const racers = [...sources, ...sources].map(
        (dataSource) => new SynthesisWorker({ ...settings, dataSource, engine: new CountingEngine() }),
      );
      // Every racer has seen the job queued before any claims it: only the compare-and-set decides.
      const restore = allLookFirst(sources, racers.length);
      const won = await Promise.all(racers.map((r) => r.claimNext())).finally(restore);
      expect(won.filter(Boolean)).toHaveLength(1);
      const winner = won.find(Boolean)!;
      expect(winner).toMatchObject({ id: job.id, state: 'running', attempts: 1 });
      expect(winner.workerId).toBe(racers[won.indexOf(winner)].id);
      await db.manager.clear(Synthesis);
    }
  });

  it('gives an abandoned job to exactly one racer, and none takes a job whose lease was renewed after it looked', async () => {
    const sources = TEST_DB === 'mysql' ? await Promise.all(Array.from({ length: 2 }, open)) : [db, db];
    extra.push(...sources.filter((s) => s !== db));
    const racers = () =>
      [...sources, ...sources].map(
        (dataSource) => new SynthesisWorker({ ...settings, dataSource, engine: new CountingEngine() }),
      );
    const abandoned = {
      state: SynthesisState.RUNNING,
      attempts: 1,
      workerId: 'gone',
      leaseUntil: new Date(Date.now() - 1000),
    };

    const [job] = await queue(1, abandoned);
    let restore = allLookFirst(sources, 4);
    const won = (await Promise.all(racers().map((r) => r.claimNext())).finally(restore)).filter(Boolean);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ id: job.id, attempts: 2 });

    // Its worker was slow, not dead: it renews the lease after the racers looked.
    const [renewed] = await queue(1, abandoned);
    restore = allLookFirst(sources, 4, () =>
      db.manager.update(Synthesis, { id: renewed.id }, { leaseUntil: new Date(Date.now() + 60_000) }),
    );
    expect((await Promise.all(racers().map((r) => r.claimNext())).finally(restore)).filter(Boolean)).toEqual([]);
    expect(await row(renewed.id)).toMatchObject({ workerId: 'gone', attempts: 1 });
  });

  it('never takes a job that another worker finished, or its owner canceled, after it looked for the next one', async () => {
    // The owner's next job is looked up in two steps (the heads, then their rows): in between,
    // another worker takes the job and finishes it, or its owner cancels it.
    for (const since of [
      { state: SynthesisState.SUCCEEDED, attempts: 1, durationMs: 100, audioKey: 'x.wav', audioBytes: 1644 },
      { state: SynthesisState.CANCELED, attempts: 0 },
    ]) {
      const [job] = await queue(1);
      const query = db.manager.query.bind(db.manager);
      let changed = false;
      const spy = jest.spyOn(db.manager, 'query').mockImplementationOnce(async (...args: Parameters<typeof query>) => {
        const heads = await query(...args);
        changed = true;
        await db.manager.update(Synthesis, { id: job.id }, { ...since, finishedAt: new Date() });
        return heads;
      });
      try {
        expect(
          await new SynthesisWorker({ ...settings, dataSource: db, engine: new CountingEngine() }).claimNext(),
        ).toBeNull();
      } finally {
        spy.mockRestore();
      }
      expect(changed).toBe(true);
      expect(await row(job.id)).toMatchObject({ state: since.state, attempts: since.attempts, workerId: null });
      expect(await db.manager.findBy(OutboxEvent, { type: 'synthesis.started', resourceId: job.id })).toEqual([]);
    }
  });

  it('runs each of 60 jobs exactly once across four running workers', async () => {
    const engine = new CountingEngine();
    const sources = TEST_DB === 'mysql' ? await Promise.all(Array.from({ length: 4 }, open)) : [db, db, db, db];
    extra.push(...sources.filter((s) => s !== db));
    const jobs = await queue(60);
    for (const dataSource of sources) worker(engine, { dataSource, concurrency: 3 }).start();
    const rows = await allFinished(jobs.map((j) => j.id));
    expect(
      rows.filter((r) => !(r.state === SynthesisState.SUCCEEDED && r.attempts === 1 && r.durationMs === 100)),
    ).toEqual([]);
    for (const job of jobs) expect(engine.calls.get(job.text)).toBe(1);
    const events = await db.manager.findBy(OutboxEvent, { type: 'synthesis.succeeded' });
    expect(events.map((e) => e.resourceId).sort()).toEqual(jobs.map((j) => j.id).sort());
    // Only the worker that won a job records its start.
    const started = await db.manager.findBy(OutboxEvent, { type: 'synthesis.started' });
    expect(started.map((e) => e.resourceId).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(started.every((e) => JSON.parse(e.payload).attempt === 1)).toBe(true);
    for (const job of jobs) expect(fs.existsSync(path.join(audioDir(config), `${job.id}.wav`))).toBe(true);
  });
});

describe('workers that die', () => {
  it('takes a job again once the lease of its dead worker has ended, and runs it to the end', async () => {
    const [job] = await queue(1);
    // A worker takes the job and dies: it never renews the lease nor finishes.
    const dead = new SynthesisWorker({ ...settings, dataSource: db, engine: new CountingEngine(), leaseSeconds: 30 });
    const before = Date.now();
    expect((await dead.claimNext())?.id).toBe(job.id);
    const lease = (await row(job.id)).leaseUntil!.getTime();
    expect(lease).toBeGreaterThanOrEqual(before + 30_000 - 1000);
    expect(lease).toBeLessThanOrEqual(Date.now() + 30_000 + 1000);
    // While the lease holds, nobody takes it.
    const rival = new SynthesisWorker({ ...settings, dataSource: db, engine: new CountingEngine() });
    expect(await rival.claimNext()).toBeNull();
    // The lease ends (moved into the past rather than waited for).
    await db.manager.update(Synthesis, { id: job.id }, { leaseUntil: new Date(Date.now() - 1) });
    const engine = new CountingEngine();
    worker(engine).start();
    const [done] = await allFinished([job.id]);
    expect(done).toMatchObject({ state: 'succeeded', attempts: 2, workerId: null, leaseUntil: null });
    expect(engine.calls.get(job.text)).toBe(1);
    const started = await db.manager.find(OutboxEvent, {
      where: { type: 'synthesis.started', resourceId: job.id },
      order: { seq: 'ASC' },
    });
    expect(started.map((e) => JSON.parse(e.payload).attempt)).toEqual([1, 2]);
  });

  it('fails a job that has been taken the most times, with a synthesis.failed event of its own', async () => {
    const jobs = await queue(2, {
      state: SynthesisState.RUNNING,
      attempts: 3,
      workerId: 'gone',
      leaseUntil: new Date(Date.now() - 1000),
    });
    const engine = new CountingEngine();
    worker(engine).start();
    const done = await allFinished(jobs.map((j) => j.id));
    for (const d of done)
      expect(d).toMatchObject({ state: 'failed', error: expect.stringContaining('interrupted 3 times') });
    expect(engine.calls.size).toBe(0);
    for (const job of jobs) {
      const events = await db.manager.findBy(OutboxEvent, { type: 'synthesis.failed', resourceId: job.id });
      expect(events.map((e) => JSON.parse(e.payload))).toEqual([
        expect.objectContaining({
          synthesis_id: job.id,
          state: 'failed',
          error: expect.stringContaining('interrupted 3 times'),
        }),
      ]);
    }
  });

  it('keeps renewing the lease of a long job, so no other worker takes it', async () => {
    const [job] = await queue(1);
    let release!: () => void;
    const slow = new CountingEngine(
      () => new Promise((resolve) => (release = () => resolve({ sampleRate: 8000, samples: new Int16Array(8) }))),
    );
    worker(slow, { leaseSeconds: 3 }).start();
    await until(() => Promise.resolve(slow.calls.size > 0));
    const firstEnd = (await row(job.id)).leaseUntil!.getTime();
    // Past the end of the first lease, the row holds a later one: it was renewed.
    await until(
      async () => Date.now() > firstEnd && (await row(job.id)).leaseUntil!.getTime() > Date.now(),
      'a renewed lease past the first one',
      10_000,
    );
    const rival = new CountingEngine();
    expect(await new SynthesisWorker({ ...settings, dataSource: db, engine: rival }).claimNext()).toBeNull();
    release();
    const [done] = await allFinished([job.id]);
    expect(done).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(rival.calls.size).toBe(0);
  });
});

describe('outcomes', () => {
  it('fails a job the engine cannot render, saying why, with a synthesis.failed event', async () => {
    const [job] = await queue(1);
    worker(
      new CountingEngine(async () => {
        throw new Error('speech engine: no such voice');
      }),
    ).start();
    const [done] = await allFinished([job.id]);
    expect(done).toMatchObject({ state: 'failed', error: 'speech engine: no such voice', attempts: 1 });
    const [event] = await db.manager.findBy(OutboxEvent, { resourceId: job.id, type: 'synthesis.failed' });
    expect(JSON.parse(event.payload)).toMatchObject({ state: 'failed', error: 'speech engine: no such voice' });
  });

  it('fails a job whose audio cannot be stored without showing the storage error to its owner, leaving no file', async () => {
    const [job] = await queue(1);
    const enospc = () => Promise.reject(new Error('ENOSPC: no space left on device, open /srv/secret/audio'));
    const full = Object.assign(Object.create(DiskAudioStore.prototype), store, {
      begin: async (key: string) => ({ ...(await store.begin(key)), append: enospc }),
    }) as DiskAudioStore;
    worker(new CountingEngine(), { store: full }).start();
    const [done] = await allFinished([job.id]);
    expect(done).toMatchObject({
      state: 'failed',
      error: 'The audio could not be stored; request the synthesis again.',
    });
    expect(fs.readdirSync(audioDir(config)).filter((f) => f.includes(job.id))).toEqual([]);
  });

  it('writes the audio under a partial name and renames it, with its real header, before the job is marked succeeded', async () => {
    const [job] = await queue(1);
    const file = path.join(audioDir(config), `${job.id}.wav`);
    const renames: { from: string; to: string; state: string; existed: boolean }[] = [];
    const rename = jest.spyOn(fsp, 'rename').mockImplementation(async (from, to) => {
      renames.push({
        from: String(from),
        to: String(to),
        state: (await row(job.id)).state,
        existed: fs.existsSync(String(to)),
      });
      return realRename(from, to);
    });
    try {
      worker(new CountingEngine()).start();
      const [done] = await allFinished([job.id]);
      expect(done).toMatchObject({
        state: 'succeeded',
        audioKey: `${job.id}.wav`,
        audioBytes: 44 + 1600,
        durationMs: 100,
      });
    } finally {
      rename.mockRestore();
    }
    // Renamed onto its key while the job was still running: a reader of the key never sees half a file.
    expect(renames).toEqual([
      {
        from: expect.stringMatching(new RegExp(`/${job.id}\\.1-[0-9a-f]{8}\\.part$`)),
        to: file,
        state: 'running',
        existed: false,
      },
    ]);
    const wav = fs.readFileSync(file);
    expect([wav.length, wav.readUInt32LE(4), wav.readUInt32LE(24), wav.readUInt32LE(40)]).toEqual([
      44 + 1600,
      36 + 1600,
      8000,
      1600,
    ]);
    expect(fs.existsSync(renames[0].from)).toBe(false);
  });

  it('streams: what the engine has handed over is readable while the job runs, "length unknown" in its header, then the finished file', async () => {
    const [job] = await queue(1);
    let more!: () => void;
    const pieces: number[] = [];
    // Hands over 100 samples, waits to be told, hands over 100 more and ends.
    const streaming: SpeechEngine = {
      ...new CountingEngine(),
      async synthesize(_request, limits) {
        limits.onAudio!(new Int16Array(100).fill(5), 16000);
        pieces.push(1);
        await new Promise<void>((resolve) => (more = resolve));
        limits.onAudio!(new Int16Array(100).fill(6), 16000);
        return { sampleRate: 16000, samples: new Int16Array(0) };
      },
    };
    worker(streaming).start();
    const service = new SynthesisService(db, streaming, new VoiceService(db, streaming), store, { queuePerUser: 10 });
    const first = await until(async () => {
      const piece = await service.stream(job.ownerId, job.id, 0, 1000);
      return piece.bytes.length ? piece : null;
    }, 'the first piece');
    expect(first).toMatchObject({ state: 'running', end: false });
    expect(first.bytes.length).toBe(44 + 200);
    expect([
      first.bytes.readUInt32LE(4),
      first.bytes.readUInt32LE(24),
      first.bytes.readUInt32LE(40),
      first.bytes.readInt16LE(44),
    ]).toEqual([0xffffffff, 16000, 0xffffffff, 5]);
    expect(await service.stream(job.ownerId, job.id, 244, 1000)).toMatchObject({
      state: 'running',
      end: false,
      bytes: Buffer.alloc(0),
    });
    more();
    await allFinished([job.id]);
    const rest = await service.stream(job.ownerId, job.id, 244, 1000);
    expect(rest).toMatchObject({ state: 'succeeded', end: true });
    expect([rest.bytes.length, rest.bytes.readInt16LE(0)]).toEqual([200, 6]);
    await expect(service.stream(uuidv7(), job.id, 0, 10)).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.stream(job.ownerId, job.id, 0, 2 * 1024 * 1024)).rejects.toMatchObject({
      code: 'validation_error',
    });
  });

  it('leaves no file behind when the audio cannot be written', async () => {
    const dir = path.join(audioDir(config), 'failing');
    const disk = new DiskAudioStore(dir);
    const writeFile = jest.spyOn(fsp, 'writeFile').mockImplementationOnce(async (file) => {
      await realWriteFile(file, 'half a wav');
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    });
    try {
      await expect(disk.put('k.wav', Buffer.alloc(100))).rejects.toThrow('ENOSPC');
    } finally {
      writeFile.mockRestore();
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(await disk.size('k.wav')).toBeNull();
  });

  it('stop() lets a running job finish within the grace period', async () => {
    const [job] = await queue(1);
    let release: (() => void) | undefined;
    const slow = new CountingEngine(
      () =>
        new Promise((resolve) => (release = () => resolve({ sampleRate: 8000, samples: new Int16Array(800).fill(7) }))),
    );
    const w = new SynthesisWorker({ ...settings, dataSource: db, engine: slow, stopGraceMs: 30_000 });
    w.start();
    // The engine is rendering (its stand-in counts the call a moment before it starts).
    await until(() => Promise.resolve(release !== undefined));
    let stopped = false;
    const stopping = w.stop().then(() => (stopped = true));
    // stop() waits for the job rather than handing it back at once.
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    expect(await row(job.id)).toMatchObject({ state: 'running' });
    release!();
    await stopping;
    expect(await row(job.id)).toMatchObject({ state: 'succeeded', attempts: 1, workerId: null });
    expect(await db.manager.findBy(OutboxEvent, { type: 'synthesis.succeeded', resourceId: job.id })).toHaveLength(1);
  });

  it('stop() hands an unfinished job back to the queue without counting the attempt', async () => {
    const [job] = await queue(1);
    const hanging = new CountingEngine(() => new Promise(() => {}));
    const w = new SynthesisWorker({ ...settings, dataSource: db, engine: hanging, stopGraceMs: 100 });
    w.start();
    await until(() => Promise.resolve(hanging.calls.size > 0));
    await w.stop();
    expect(await db.manager.findOneBy(Synthesis, { id: job.id })).toMatchObject({
      state: 'queued',
      attempts: 0,
      workerId: null,
    });
  });
});

describe('finishing', () => {
  it('runs finish again when it loses a deadlock: the job ends succeeded, with its audio and one event', async () => {
    const [job] = await queue(1);
    // Injected at the query layer (a real deadlock needs a second connection in lock step with the
    // worker): finish's first transaction, its work done, fails as MariaDB's deadlock victim does.
    const transaction = db.transaction.bind(db) as (
      work: (m: import('typeorm').EntityManager) => Promise<unknown>,
    ) => Promise<unknown>;
    let deadlocks = 0;
    const spy = jest.spyOn(db, 'transaction').mockImplementation((async (
      work: (m: import('typeorm').EntityManager) => Promise<unknown>,
    ) =>
      transaction(async (m) => {
        const result = await work(m);
        if (!deadlocks && (await m.findOneByOrFail(Synthesis, { id: job.id })).state === SynthesisState.SUCCEEDED) {
          deadlocks++;
          throw Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), {
            code: 'ER_LOCK_DEADLOCK',
            errno: 1213,
          });
        }
        return result;
      })) as never);
    try {
      worker(new CountingEngine()).start();
      const [done] = await allFinished([job.id]);
      expect(deadlocks).toBe(1);
      expect(done).toMatchObject({ state: 'succeeded', audioKey: `${job.id}.wav`, audioBytes: 44 + 1600, attempts: 1 });
    } finally {
      spy.mockRestore();
    }
    expect(fs.statSync(path.join(audioDir(config), `${job.id}.wav`)).size).toBe(44 + 1600);
    expect(await db.manager.findBy(OutboxEvent, { resourceId: job.id, type: 'synthesis.succeeded' })).toHaveLength(1);
    expect(await db.manager.findBy(OutboxEvent, { resourceId: job.id, type: 'synthesis.failed' })).toHaveLength(0);
  });

  it("a worker whose lease was taken over leaves <id>.wav alone: the new take's audio is what is stored", async () => {
    const [job] = await queue(1);
    const file = path.join(audioDir(config), `${job.id}.wav`);
    // The first take renders 800 samples and is held mid-render; its poller is not started (run() is
    // driven directly), so only finish's fence can stop it.
    let release!: () => void;
    const stale = new CountingEngine(
      () =>
        new Promise(
          (resolve) => (release = () => resolve({ sampleRate: 8000, samples: new Int16Array(800).fill(1000) })),
        ),
    );
    const first = worker(stale);
    const taken = (await first.claimNext())!;
    const running = (first as unknown as { run(j: Synthesis): Promise<void> }).run(taken);
    await until(() => Promise.resolve(stale.calls.size > 0));
    // Its lease ends; another worker takes the job again and stores its own (shorter) audio.
    await db.manager.update(Synthesis, { id: job.id }, { leaseUntil: new Date(Date.now() - 1) });
    worker(new CountingEngine(async () => ({ sampleRate: 8000, samples: new Int16Array(400).fill(2000) }))).start();
    const [done] = await allFinished([job.id]);
    expect(done).toMatchObject({ state: 'succeeded', attempts: 2, audioBytes: 44 + 800 });
    const current = fs.readFileSync(file);
    // The first take finishes now: refused, and its audio goes nowhere.
    const renames: string[] = [];
    const rename = jest.spyOn(fsp, 'rename').mockImplementation(async (from, to) => {
      renames.push(String(to));
      return realRename(from, to);
    });
    try {
      release();
      await running;
    } finally {
      rename.mockRestore();
    }
    expect(renames).toEqual([]);
    expect(fs.readFileSync(file).equals(current)).toBe(true);
    expect(current.length).toBe(44 + 800);
    expect(await row(job.id)).toMatchObject({ state: 'succeeded', attempts: 2, audioBytes: 44 + 800 });
    expect(fs.readdirSync(audioDir(config)).filter((f) => f.includes(job.id))).toEqual([`${job.id}.wav`]);
  });
});

describe('retention', () => {
  it('deletes syntheses that finished before the cut-off, with their audio, and keeps the rest', async () => {
    const old = new Date(Date.now() - 3600_000);
    const [expired] = await queue(1, {
      state: SynthesisState.SUCCEEDED,
      finishedAt: old,
      audioKey: 'expired.wav',
      audioBytes: 4,
    });
    const [expiredFailed] = await queue(1, { state: SynthesisState.FAILED, finishedAt: old, error: 'x' });
    const [recent] = await queue(1, {
      state: SynthesisState.SUCCEEDED,
      finishedAt: new Date(),
      audioKey: 'recent.wav',
      audioBytes: 4,
    });
    const [waiting] = await queue(1);
    await store.put('expired.wav', Buffer.from('RIFF'));
    await store.put('recent.wav', Buffer.from('RIFF'));
    const service = new SynthesisService(db, new CountingEngine(), new VoiceService(db, new CountingEngine()), store, {
      queuePerUser: 10,
    });
    expect(await service.prune(new Date(Date.now() - 60_000))).toBe(2);
    const left = (await db.manager.findBy(Synthesis, {})).map((s) => s.id).sort();
    expect(left).toEqual([recent.id, waiting.id].sort());
    expect(left).not.toContain(expired.id);
    expect(left).not.toContain(expiredFailed.id);
    expect(await store.size('expired.wav')).toBeNull();
    expect(await store.size('recent.wav')).toBe(4);
  });
});

describe('partial audio', () => {
  it('prunePartial removes only .part files not written since the cut-off', async () => {
    const dir = path.join(audioDir(config), 'partial');
    const disk = new DiskAudioStore(dir);
    expect(await disk.prunePartial(new Date())).toBe(0); // no folder yet
    const stale = await disk.begin('stale.1-00000000.part');
    await stale.append(Buffer.from('RIFF'));
    const live = await disk.begin('live.1-00000000.part');
    await live.append(Buffer.from('RIFF'));
    await disk.put('done.wav', Buffer.from('RIFF'));
    const hourAgo = new Date(Date.now() - 3600_000);
    fs.utimesSync(path.join(dir, 'stale.1-00000000.part'), hourAgo, hourAgo);
    fs.utimesSync(path.join(dir, 'done.wav'), hourAgo, hourAgo);
    expect(await disk.prunePartial(new Date(Date.now() - 60_000))).toBe(1);
    expect(fs.readdirSync(dir).sort()).toEqual(['done.wav', 'live.1-00000000.part']);
    await stale.abort();
    await live.commit('live.wav');
    expect(fs.readdirSync(dir).sort()).toEqual(['done.wav', 'live.wav']);
    await expect(disk.begin('not-partial.wav')).rejects.toThrow(/partial/);
  });
});

describe('fair order (round robin across users)', () => {
  const claimOrder = async (w: SynthesisWorker, n: number) => {
    const owners: string[] = [];
    for (let i = 0; i < n; i++) owners.push((await w.claimNext())!.ownerId);
    return owners;
  };

  it("takes another user's job next, however many jobs the first user queued before it", async () => {
    const [a, b] = [uuidv7(), uuidv7()];
    await queue(10, { ownerId: a });
    await queue(1, { ownerId: b });
    const w = new SynthesisWorker({ ...settings, dataSource: db, engine: new CountingEngine() });
    expect(await claimOrder(w, 3)).toEqual([a, b, a]);
  });

  it('goes round three users in turn, and a user served long ago comes before one just served', async () => {
    const [a, b, c] = [uuidv7(), uuidv7(), uuidv7()];
    for (const owner of [a, b, c]) await queue(3, { ownerId: owner });
    const w = new SynthesisWorker({ ...settings, dataSource: db, engine: new CountingEngine() });
    expect(await claimOrder(w, 9)).toEqual([a, b, c, a, b, c, a, b, c]);
    // c was served last: after new jobs of c and then of a, a's is taken first.
    await queue(1, { ownerId: c });
    await queue(1, { ownerId: a });
    expect(await claimOrder(w, 2)).toEqual([a, c]);
  });

  it('still gives each job to exactly one of racing workers', async () => {
    const owners = [uuidv7(), uuidv7(), uuidv7()];
    for (const owner of owners) await queue(4, { ownerId: owner });
    const sources = TEST_DB === 'mysql' ? await Promise.all(Array.from({ length: 3 }, open)) : [db, db, db];
    extra.push(...sources.filter((s) => s !== db));
    const racers = sources.map(
      (dataSource) => new SynthesisWorker({ ...settings, dataSource, engine: new CountingEngine() }),
    );
    const won = (
      await Promise.all([...racers, ...racers, ...racers, ...racers, ...racers].map((r) => r.claimNext()))
    ).filter(Boolean) as Synthesis[];
    expect(new Set(won.map((j) => j.id)).size).toBe(won.length);
    expect(won.length).toBe(12);
  });
});

describe('cancel', () => {
  /** Renders until its signal is aborted (then rejects), or until released. */
  class HoldingEngine implements SpeechEngine {
    readonly name = 'stand-in';
    readonly defaultLanguage = 'en-us';
    baseVoices = async () => [];
    languages = async () => ['en-us'];
    stop = async () => {};
    readonly signals = new Map<string, AbortSignal>();
    release?: () => void;
    async synthesize(
      request: SpeechRequest,
      limits: { maxSeconds: number; signal?: AbortSignal },
    ): Promise<SpeechAudio> {
      this.signals.set(request.text, limits.signal!);
      await new Promise<void>((resolve, reject) => {
        this.release = resolve;
        limits.signal!.addEventListener('abort', () => reject(new Error('canceled')), { once: true });
      });
      return { sampleRate: 8000, samples: new Int16Array(800).fill(1000) };
    }
  }
  const service = () =>
    new SynthesisService(db, new CountingEngine(), new VoiceService(db, new CountingEngine()), store, {
      queuePerUser: 10,
    });

  it('stops the worker rendering a job canceled by another process, records nothing more and leaves no audio', async () => {
    const [job] = await queue(1);
    const engine = new HoldingEngine();
    worker(engine, { concurrency: 1 }).start();
    const signal = await until(async () => engine.signals.get(job.text));
    // Canceled through a service that is not this worker's (as another process would): the worker notices within a second or so.
    const canceled = await service().cancel(job.ownerId, job.id);
    expect(canceled).toMatchObject({
      outcome: 'canceled',
      synthesis: { state: 'canceled', finishedAt: expect.any(Date) },
    });
    await until(async () => signal.aborted);
    const [next] = await queue(1);
    await until(async () => engine.signals.get(next.text)); // the worker has moved on
    engine.release!();
    await allFinished([next.id]);
    expect(await db.manager.findOneByOrFail(Synthesis, { id: job.id })).toMatchObject({
      state: 'canceled',
      audioKey: null,
    });
    expect(fs.existsSync(path.join(audioDir(config), `${job.id}.wav`))).toBe(false);
    const events = await db.manager.findBy(OutboxEvent, { resourceId: job.id });
    expect(events.map((e) => e.type).sort()).toEqual(['synthesis.canceled', 'synthesis.started']);
  });

  it('removes audio a worker stored after its job was canceled', async () => {
    const [job] = await queue(1);
    const engine = new HoldingEngine();
    const w = new SynthesisWorker({ ...settings, dataSource: db, engine, concurrency: 1, pollMs: 60_000 });
    workers.push(w);
    w.start();
    await until(async () => engine.signals.get(job.text));
    // Canceled in the database only (no process told the worker, which checks once a second): the render completes and stores.
    await db.manager.update(
      Synthesis,
      { id: job.id },
      { state: SynthesisState.CANCELED, workerId: null, leaseUntil: null, finishedAt: new Date() },
    );
    engine.release!();
    await until(
      async () =>
        !(await db.manager.findBy(OutboxEvent, { resourceId: job.id, type: 'synthesis.succeeded' })).length &&
        !fs.existsSync(path.join(audioDir(config), `${job.id}.wav`)) &&
        (w as any).running.size === 0,
    );
    expect(await db.manager.findOneByOrFail(Synthesis, { id: job.id })).toMatchObject({
      state: 'canceled',
      audioKey: null,
    });
  });

  it("deletes a finished job with its audio, once; another user's or an unknown one is not_found", async () => {
    const [job] = await queue(1);
    worker(new CountingEngine()).start();
    await allFinished([job.id]);
    const file = path.join(audioDir(config), `${job.id}.wav`);
    expect(fs.existsSync(file)).toBe(true);
    await expect(service().cancel(uuidv7(), job.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await service().cancel(job.ownerId, job.id)).toMatchObject({
      outcome: 'deleted',
      synthesis: { state: 'succeeded' },
    });
    expect(fs.existsSync(file)).toBe(false);
    expect(await db.manager.findOneBy(Synthesis, { id: job.id })).toBeNull();
    expect(await db.manager.findBy(OutboxEvent, { resourceId: job.id, type: 'synthesis.deleted' })).toHaveLength(1);
    await expect(service().cancel(job.ownerId, job.id)).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('per-user queue cap', () => {
  it('accepts exactly SYNTHESIS_QUEUE_PER_USER of 40 requests racing through four services (connection pools on MySQL)', async () => {
    const engine = new CountingEngine();
    (engine as SpeechEngine).baseVoices = async () => [
      { name: 'f3', displayName: 'f3', gender: null, languages: ['en-us'], description: '' },
    ];
    const sources = TEST_DB === 'mysql' ? await Promise.all(Array.from({ length: 4 }, open)) : [db, db, db, db];
    extra.push(...sources.filter((s) => s !== db));
    const services = sources.map(
      (s) => new SynthesisService(s, engine, new VoiceService(s, engine), store, { queuePerUser: 10 }),
    );
    const owner = uuidv7();
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => services[i % 4].request(owner, { text: `text ${i}`, baseVoice: 'f3' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    const refusals = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
    expect(refusals).toHaveLength(30);
    for (const reason of refusals)
      expect(reason).toMatchObject({
        code: 'rate_limit_exceeded',
        retryAfter: expect.any(Number),
        details: { limit: 10 },
      });
    expect(await db.manager.countBy(Synthesis, { ownerId: owner })).toBe(10);
  });
});
