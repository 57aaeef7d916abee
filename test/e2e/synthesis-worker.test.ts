// A synthesis worker process killed mid-job (SIGKILL: no chance to hand the job back): once
// its lease has ended, another worker process takes the job and completes it, and its
// synthesis.succeeded event is in the event log once. Real processes on one MySQL.
import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { startProcess } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { EventLog } from '../../lib/event-log';
import { ttsSubgraph } from '../../subgraphs/tts';
import { Synthesis, SynthesisState } from '../../subgraphs/tts/entities/synthesis';
import { parseWav } from '../helpers/audio';
import { cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import fs from 'node:fs';
import path from 'node:path';
import { audioDir } from '../../subgraphs/tts/settings';

const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

onMysql('synthesis worker processes', () => {
  const env = { ...isolatedEnv(), LOG_LEVEL: 'info', SYNTHESIS_LEASE_SECONDS: '2', SYNTHESIS_POLL_MS: '50' };
  const config = loadConfig(env);
  let db: DataSource;

  beforeAll(async () => {
    db = await openDatabase(config, {
      name: 'tts',
      entities: ttsSubgraph.entities,
      migrations: ttsSubgraph.migrations,
    });
  });
  afterAll(async () => {
    await db?.destroy();
    await cleanupDatabases(config);
  });

  const row = (id: string) => db.manager.findOneByOrFail(Synthesis, { id });
  async function until(probe: () => Promise<boolean>, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('completes the job of a killed worker after a restart', async () => {
    const text = 'This sentence is long enough to keep a worker busy for a while. '.repeat(150).slice(0, 9_000);
    const id = uuidv7();
    await db.manager.insert(Synthesis, {
      id,
      ownerId: uuidv7(),
      state: SynthesisState.QUEUED,
      voiceId: null,
      baseVoice: 'm1',
      voiceBlend: null,
      language: 'en-us',
      speed: 0.5,
      text,
      characters: text.length,
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
    });

    const first = await startProcess('worker 1', 'worker.js', ['tts'], env);
    await until(async () => (await row(id)).state === SynthesisState.RUNNING, 20_000);
    await first.kill('SIGKILL');
    const orphaned = await row(id);
    expect(orphaned).toMatchObject({ state: 'running', attempts: 1 });

    const second = await startProcess('worker 2', 'worker.js', ['tts'], env);
    try {
      await until(async () => (await row(id)).state === SynthesisState.SUCCEEDED, 60_000);
      const done = await row(id);
      expect(done).toMatchObject({ attempts: 2, error: null, workerId: null });
      expect(done.workerId).toBeNull();
      const wav = parseWav(fs.readFileSync(path.join(audioDir(config), `${id}.wav`)));
      expect(Math.round((wav.samples.length * 1000) / wav.sampleRate)).toBe(done.durationMs);
      expect(done.durationMs!).toBeGreaterThan(60_000); // 9,000 characters at half speed

      const log = await EventLog.open(config);
      try {
        await until(async () => (await log.read(0, 1000)).some((e) => e.resourceId === id), 10_000);
        await until(
          async () => (await log.read(0, 1000)).some((e) => e.resourceId === id && e.type === 'synthesis.succeeded'),
          10_000,
        );
        // One start per take (the killed worker's and the second's), one outcome.
        expect(
          (await log.read(0, 1000))
            .filter((e) => e.resourceId === id)
            .map((e) => [e.type, JSON.parse(e.payload).attempt ?? null]),
        ).toEqual([
          ['synthesis.started', 1],
          ['synthesis.started', 2],
          ['synthesis.succeeded', null],
        ]);
      } finally {
        await log.close();
      }
    } finally {
      await second.kill();
    }
    expect(await second.exited).toBe(0);
  }, 120_000);
});
