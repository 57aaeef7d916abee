// The TTS subgraph: voices on the speech engine's base voices, and speech rendered with them.
// Owns the `tts` database; meets the auth subgraph only through `owner: User` and events.
import path from 'node:path';
import { migrationsIn } from '../../lib/database/migrations-in';
import { addSynthesisJobsSource, addSynthesisQueueAgeSource } from './metrics';
import { OutboxEvent } from '../../lib/outbox';
import { startPoller } from '../../lib/poller';
import type { SubgraphContext, SubgraphDefinition, SubgraphDeps } from '../../lib/subgraph';
import { openBlobStore } from '../../lib/blob-store';
import { AudioStore } from './audio/audio-store';
import { EspeakEngine } from './engine/espeak';
import type { SpeechEngine } from './engine/speech-engine';
import { Synthesis, SynthesisState } from './entities/synthesis';
import { SynthesisOwner } from './entities/synthesis-owner';
import { UserReference } from '../../lib/user-reference';
import { Voice } from './entities/voice';
import { EventConsumerPosition } from '../../lib/event-consumer';
import { userDeletionConsumer } from './user-cascade';
import { JOB_ENTITIES } from '../../lib/kit/jobs';
import { jobQueue } from '../../lib/kit/user-cascade';
import { SynthesisWorkerBeat } from './entities/synthesis-worker-beat';
import { SynthesisStatusResolver } from './resolvers/synthesis-status-resolver';
import { WorkerHeartbeat } from './worker-heartbeat';
import { UserCap } from '../../lib/kit/user-caps';
import { SynthesisAudioResolver, SynthesisResolver } from './resolvers/synthesis-resolver';
import { VoiceResolver } from './resolvers/voice-resolver';
import { SynthesisService } from './synthesis-service';
import { EncoderPool } from './audio/encoder-pool';
import { SynthesisWorker } from './synthesis-worker';
import { VoiceService } from './voice-service';
import { audioDir } from './settings';

const RETENTION_EVERY_MS = 10 * 60_000;

/** The queue as the tts database holds it, read when /metrics is scraped. Returns the removal. */
function reportQueue({ dataSource }: SubgraphDeps): () => void {
  const removeJobs = addSynthesisJobsSource(async () => {
    const rows: { state: string; n: string | number }[] = await dataSource
      .createQueryBuilder(Synthesis, 's')
      .select('s.state', 'state')
      .addSelect('COUNT(*)', 'n')
      .groupBy('s.state')
      .getRawMany();
    return rows.map((r) => ({ labels: { state: r.state }, value: Number(r.n) }));
  });
  const removeAge = addSynthesisQueueAgeSource(async () => {
    const oldest = await dataSource.manager.findOne(Synthesis, {
      select: { id: true, createdAt: true },
      where: { state: SynthesisState.QUEUED },
      order: { id: 'ASC' },
    });
    return [{ labels: {}, value: oldest ? Math.max(0, (Date.now() - oldest.createdAt.getTime()) / 1000) : 0 }];
  });
  return () => {
    removeJobs();
    removeAge();
  };
}

/** Its heartbeat, apart from how it takes jobs: readiness counts live workers by it. */
function heartbeatOf({ config, dataSource, logger }: SubgraphDeps, worker: SynthesisWorker, concurrency: number) {
  return new WorkerHeartbeat(dataSource, worker.id, concurrency, config.SYNTHESIS_HEARTBEAT_SECONDS, logger);
}

function synthesisWorker(
  { config, dataSource, logger }: SubgraphDeps,
  engine: SpeechEngine,
  store: AudioStore,
  concurrency: number,
) {
  return new SynthesisWorker({
    dataSource,
    engine,
    store,
    logger,
    concurrency,
    leaseSeconds: config.SYNTHESIS_LEASE_SECONDS,
    maxAttempts: config.SYNTHESIS_MAX_ATTEMPTS,
    pollMs: config.SYNTHESIS_POLL_MS,
    maxPollMs: config.POLL_MAX_IDLE_MS,
    maxAudioSeconds: config.SYNTHESIS_MAX_AUDIO_SECONDS,
  });
}

export const ttsSubgraph: SubgraphDefinition = {
  name: 'tts',
  entities: [
    Voice,
    Synthesis,
    SynthesisOwner,
    SynthesisWorkerBeat,
    UserCap,
    ...JOB_ENTITIES,
    OutboxEvent,
    EventConsumerPosition,
  ],
  migrations: migrationsIn(path.join(__dirname, 'migrations')),
  create(deps) {
    const { config, dataSource, logger, events } = deps;
    const engine = new EspeakEngine(Math.max(1, config.SYNTHESIS_CONCURRENCY));
    const store = openBlobStore(config, 'audio', audioDir(config));
    const voices = new VoiceService(dataSource, engine, { voicesPerUser: config.VOICES_PER_USER });
    // In-process rendering unless this process leaves it to worker processes.
    const worker =
      config.SYNTHESIS_CONCURRENCY > 0 ? synthesisWorker(deps, engine, store, config.SYNTHESIS_CONCURRENCY) : undefined;
    const heartbeat = worker && heartbeatOf(deps, worker, config.SYNTHESIS_CONCURRENCY);
    const status = new SynthesisStatusResolver(dataSource, config.SYNTHESIS_HEARTBEAT_SECONDS);
    // Stored syntheses in other formats, encoded here whether or not this process renders.
    const encoders = new EncoderPool(config.AUDIO_ENCODER_THREADS);
    const syntheses = new SynthesisService(dataSource, engine, voices, store, {
      queuePerUser: config.SYNTHESIS_QUEUE_PER_USER,
      audioBytesPerUser: config.AUDIO_BYTES_PER_USER,
      onQueued: () => worker?.wake(),
      onCanceled: (id) => worker?.cancel(id),
      encoders,
    });
    let retention: { stop(): Promise<void> } | undefined;
    let stopReporting: (() => void) | undefined;
    // A deleted user's voices and syntheses go with them (the auth subgraph's user.deleted event).
    const queue = jobQueue({ config, dataSource, logger });
    const cascade = userDeletionConsumer({ dataSource, log: events, store, queue, config, logger });
    return {
      resolvers: [
        new VoiceResolver(voices, engine),
        new SynthesisResolver(syntheses),
        new SynthesisAudioResolver(syntheses, config.GRAPHQL_MAX_AUDIO_BYTES),
        status,
      ],
      orphanedTypes: [UserReference],
      references: {
        // Other subgraphs may point at a voice or a synthesis; only its owner sees it.
        Voice: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? voices.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
        Synthesis: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? syntheses.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
      async start() {
        worker?.start();
        stopReporting = reportQueue(deps);
        queue.start();
        await cascade.start();
        heartbeat?.start();
        // Any instance may prune: deleting what is already gone is harmless.
        retention = startPoller({
          name: 'synthesis retention',
          intervalMs: RETENTION_EVERY_MS,
          logger,
          work: async () => {
            const pruned = await syntheses.prune(new Date(Date.now() - config.SYNTHESIS_RETENTION_SECONDS * 1000));
            if (pruned) logger.info({ pruned }, 'expired syntheses deleted with their audio');
            // Audio of takes whose worker died mid-render: a live render writes every ~100 ms.
            const partial = await store.prunePartial(
              new Date(Date.now() - Math.max(3600, 4 * config.SYNTHESIS_LEASE_SECONDS) * 1000),
            );
            if (partial) logger.info({ partial }, 'audio left by interrupted renders deleted');
          },
        });
      },
      async stop() {
        stopReporting?.();
        await cascade.stop();
        await queue.stop();
        await retention?.stop();
        await worker?.stop();
        await heartbeat?.stop();
        await engine.stop();
        await encoders.stop();
      },
      // Without a live worker the service still answers and keeps jobs: degraded, not down.
      async readiness() {
        const h = await status.health();
        return {
          checks: { synthesis: h.status },
          details: {
            synthesis: {
              live_workers: h.liveWorkers,
              queued: h.queued,
              oldest_queued_age_seconds: h.oldestQueuedAgeSeconds,
            },
          },
        };
      },
    };
  },
  // `npm run start:worker -- tts`: rendering only, beside subgraph processes run with SYNTHESIS_CONCURRENCY=0.
  worker(deps) {
    const concurrency = Math.max(1, deps.config.SYNTHESIS_CONCURRENCY);
    const engine = new EspeakEngine(concurrency);
    const worker = synthesisWorker(
      deps,
      engine,
      openBlobStore(deps.config, 'audio', audioDir(deps.config)),
      concurrency,
    );
    const heartbeat = heartbeatOf(deps, worker, concurrency);
    worker.start();
    heartbeat.start();
    return {
      async stop() {
        await worker.stop();
        await heartbeat.stop();
        await engine.stop();
      },
    };
  },
};
