// Whether speech is being rendered at all: every synthesis worker heartbeats into the tts
// database (apart from how it takes jobs), and readiness reads how many are alive and how long
// the oldest queued job has waited. With none alive the service still answers (voices, reads,
// queued jobs are kept), but synthesis is `degraded` and new jobs say so.
import type { DataSource } from 'typeorm';
import { LessThan, MoreThan } from 'typeorm';
import type { Logger } from '../../lib/logger';
import { Poller, startPoller } from '../../lib/poller';
import { Synthesis, SynthesisState } from './entities/synthesis';
import { SynthesisWorkerBeat } from './entities/synthesis-worker-beat';

/** A worker is alive while its last heartbeat is younger than this many heartbeat periods. */
const LIVE_PERIODS = 3;
/** Rows of workers that died without deleting theirs are removed after this long. */
const FORGET_MS = 24 * 3600_000;

export class WorkerHeartbeat {
  private poller?: Poller;
  private readonly startedAt = new Date();

  constructor(
    private readonly dataSource: DataSource,
    private readonly workerId: string,
    private readonly concurrency: number,
    private readonly intervalSeconds: number,
    private readonly logger: Logger,
  ) {}

  /** Beats at once, then every interval; a failed beat (database down) is retried at the next. */
  start(): void {
    this.poller = startPoller({
      name: 'synthesis worker heartbeat',
      intervalMs: this.intervalSeconds * 1000,
      work: () => this.beat(),
      logger: this.logger,
    });
  }

  private async beat(): Promise<void> {
    const { manager } = this.dataSource;
    const now = new Date();
    const updated = await manager.update(SynthesisWorkerBeat, { id: this.workerId }, { heartbeatAt: now });
    if (!updated.affected) {
      await manager.upsert(
        SynthesisWorkerBeat,
        { id: this.workerId, heartbeatAt: now, startedAt: this.startedAt, concurrency: this.concurrency },
        ['id'],
      );
      await manager.delete(SynthesisWorkerBeat, { heartbeatAt: LessThan(new Date(now.getTime() - FORGET_MS)) });
    }
  }

  /** Stops beating and removes its row, so that readiness stops counting it at once. */
  async stop(): Promise<void> {
    await this.poller?.stop();
    await this.dataSource.manager
      .delete(SynthesisWorkerBeat, { id: this.workerId })
      .catch((err) => this.logger.warn({ err }, 'heartbeat row not removed; it stops counting once it is old'));
  }
}

export interface SynthesisHealth {
  /** `up` with at least one live worker, `degraded` with none. */
  status: 'up' | 'degraded';
  liveWorkers: number;
  queued: number;
  /** How long the oldest queued job has waited, in seconds; null with none queued. */
  oldestQueuedAgeSeconds: number | null;
}

export async function synthesisHealth(dataSource: DataSource, heartbeatSeconds: number): Promise<SynthesisHealth> {
  const now = Date.now();
  const { manager } = dataSource;
  const [liveWorkers, queued, oldest] = await Promise.all([
    manager.count(SynthesisWorkerBeat, {
      where: { heartbeatAt: MoreThan(new Date(now - LIVE_PERIODS * heartbeatSeconds * 1000)) },
    }),
    manager.countBy(Synthesis, { state: SynthesisState.QUEUED }),
    // UUIDv7 ids: the smallest queued id is the oldest queued job.
    manager.findOne(Synthesis, {
      select: { id: true, createdAt: true },
      where: { state: SynthesisState.QUEUED },
      order: { id: 'ASC' },
    }),
  ]);
  return {
    status: liveWorkers > 0 ? 'up' : 'degraded',
    liveWorkers,
    queued,
    oldestQueuedAgeSeconds: oldest ? Math.max(0, Math.round((now - oldest.createdAt.getTime()) / 100) / 10) : null,
  };
}
