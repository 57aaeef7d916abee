// Renders queued syntheses. Jobs are rows; a worker takes one with a conditional UPDATE that
// only one worker can win, holds it under a lease it renews while the engine works, and
// finishes it only while it still holds it (worker id and attempt number fence out a worker
// that lost its lease). A job whose worker died is taken again once the lease has ended.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataSource, EntityManager } from 'typeorm';
import { LessThan } from 'typeorm';
import { affectedRows, inTransaction } from '../../lib/database';
import type { Logger } from '../../lib/logger';
import { secondsSince, synthesisRenderSeconds } from '../../lib/metrics';
import { inLinkedSpan } from '../../lib/tracing';
import { recordEvent } from '../../lib/outbox';
import { Poller, startPoller } from '../../lib/poller';
import type { AudioStore } from './audio/audio-store';
import { durationMs, encodeWav } from './audio/wav';
import type { SpeechEngine } from './engine/speech-engine';
import { Synthesis, SynthesisState } from './entities/synthesis';
import { synthesisEventData as eventData } from './synthesis-service';

export interface SynthesisWorkerOptions {
  dataSource: DataSource;
  engine: SpeechEngine;
  store: AudioStore;
  logger: Logger;
  /** Jobs rendered at once. */
  concurrency: number;
  leaseSeconds: number;
  maxAttempts: number;
  pollMs: number;
  /** Longest audio a job may produce (SYNTHESIS_MAX_AUDIO_SECONDS). */
  maxAudioSeconds: number;
  /** How long stop() lets running jobs finish before handing them back to the queue. */
  stopGraceMs?: number;
}

/** The fence: the row is still this worker's, at this attempt, running. */
const held = (job: Synthesis) => ({ id: job.id, workerId: job.workerId!, attempts: job.attempts, state: SynthesisState.RUNNING });

export class SynthesisWorker {
  readonly id = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly running = new Map<string, Promise<void>>();
  /** Jobs handed back by stop(): their engine call may still fail, which is not the job's fault. */
  private readonly released = new Set<string>();
  private readonly renewals = new Map<string, NodeJS.Timeout>();
  private poller?: Poller;
  private stopping = false;

  constructor(private readonly options: SynthesisWorkerOptions) {}

  start(): void {
    const { pollMs, logger } = this.options;
    // Polls for jobs queued by other processes; wake() (a job queued here, a job done) looks at once.
    this.poller = startPoller({ name: 'synthesis worker', intervalMs: pollMs, work: () => this.fill(), logger });
  }

  /** Looks for jobs now: called when this process queues one. */
  wake(): void {
    this.poller?.wake();
  }

  /** Takes jobs while it has room. */
  private async fill(): Promise<void> {
    while (!this.stopping && this.running.size < this.options.concurrency) {
      const job = await this.claimNext();
      if (!job) return;
      const attributes = { 'synthesis.id': job.id, 'synthesis.attempt': job.attempts, 'synthesis.characters': job.characters };
      const run = inLinkedSpan('synthesis.render', job.traceParent, attributes, () => this.run(job));
      this.running.set(job.id, run.finally(() => this.running.delete(job.id)));
    }
  }

  /** The oldest job that is queued, or running under an ended lease; null when there is none to win. */
  async claimNext(): Promise<Synthesis | null> {
    const { manager } = this.options.dataSource;
    const now = new Date();
    const candidates = await manager.find(Synthesis, {
      select: { id: true, state: true, attempts: true },
      where: [{ state: SynthesisState.QUEUED }, { state: SynthesisState.RUNNING, leaseUntil: LessThan(now) }],
      order: { id: 'ASC' },
      take: 20,
    });
    for (const seen of candidates) {
      const abandoned = seen.state === SynthesisState.RUNNING;
      if (abandoned && seen.attempts >= this.options.maxAttempts) {
        await this.giveUp(seen, now);
        continue;
      }
      // Compare-and-set on (state, attempts): of workers that saw the same row, one changes it,
      // and only that one records synthesis.started (with the attempt) in the same transaction.
      const job = await inTransaction(this.options.dataSource, async (m) => {
        const result = await m.update(
          Synthesis,
          { id: seen.id, state: seen.state, attempts: seen.attempts, ...(abandoned ? { leaseUntil: LessThan(now) } : {}) },
          { state: SynthesisState.RUNNING, workerId: this.id, attempts: seen.attempts + 1, leaseUntil: this.leaseEnd(), startedAt: now },
        );
        if (affectedRows(result) !== 1) return null;
        const taken = await m.findOneByOrFail(Synthesis, { id: seen.id });
        await recordEvent(m, { type: 'synthesis.started', userId: taken.ownerId, resourceId: taken.id, data: { ...eventData(taken), attempt: taken.attempts } });
        return taken;
      });
      if (job) {
        if (abandoned) this.options.logger.warn({ synthesisId: seen.id, attempt: seen.attempts + 1 }, 'synthesis taken again after its worker stopped renewing');
        return job;
      }
    }
    return null;
  }

  private leaseEnd(): Date {
    return new Date(Date.now() + this.options.leaseSeconds * 1000);
  }

  private async run(job: Synthesis): Promise<void> {
    const { engine, store, logger, leaseSeconds } = this.options;
    this.renewals.set(job.id, setInterval(() => void this.renew(job), (leaseSeconds * 1000) / 3));
    let stage = 'render';
    try {
      const renderStart = process.hrtime.bigint();
      const audio = await engine.synthesize(job, { maxSeconds: this.options.maxAudioSeconds }).catch((err) => {
        synthesisRenderSeconds.observe({ outcome: 'failed' }, secondsSince(renderStart));
        throw err;
      });
      synthesisRenderSeconds.observe({ outcome: 'succeeded' }, secondsSince(renderStart));
      if (!audio.samples.length) throw new Error('the speech engine produced no audio for this text');
      stage = 'store';
      const wav = encodeWav(audio);
      const key = `${job.id}.wav`;
      await store.put(key, wav);
      const done = await this.finish(job, { state: SynthesisState.SUCCEEDED, durationMs: durationMs(audio), audioKey: key, audioBytes: wav.length });
      if (!done && !(await this.options.dataSource.manager.existsBy(Synthesis, { id: job.id }))) {
        // Deleted while it rendered (its owner was deleted): nothing may keep its audio.
        await store.delete(key);
      } else if (!done) {
        // The audio stays: whoever holds the job now writes the same key.
        logger.warn({ synthesisId: job.id }, 'synthesis finished after its lease was lost; the result is left to the current holder');
      }
    } catch (err) {
      if (this.released.has(job.id)) return;
      // A render refused for the request's sake (too long, no audio) is expected: its reason, no stack.
      if (stage === 'render') logger.warn({ synthesisId: job.id, stage, reason: String((err as Error)?.message ?? err) }, 'synthesis failed');
      else logger.error({ err, synthesisId: job.id, stage }, 'synthesis failed');
      // The engine's reasons are about the request; storage and database errors are ours, and stay in the log.
      const error = stage === 'render' ? String((err as Error)?.message ?? err).slice(0, 500) : 'The audio could not be stored; request the synthesis again.';
      await this.finish(job, { state: SynthesisState.FAILED, error }).catch((e) =>
        logger.error({ err: e, synthesisId: job.id }, 'could not record the failure; the job is taken again when its lease ends'),
      );
    } finally {
      clearInterval(this.renewals.get(job.id));
      this.renewals.delete(job.id);
      this.released.delete(job.id);
      this.wake(); // room for the next job
    }
  }

  /** Records the outcome and its event in one transaction, if the job is still this worker's. */
  private finish(job: Synthesis, outcome: Partial<Synthesis>): Promise<boolean> {
    return inTransaction(this.options.dataSource, async (m) => {
      const finished = { ...outcome, finishedAt: new Date(), leaseUntil: null, workerId: null };
      if (affectedRows(await m.update(Synthesis, held(job), finished)) !== 1) return false;
      await this.recordOutcome(m, { ...job, ...finished } as Synthesis);
      return true;
    });
  }

  private recordOutcome(m: EntityManager, s: Synthesis) {
    return recordEvent(m, { type: `synthesis.${s.state}`, userId: s.ownerId, resourceId: s.id, data: eventData(s) });
  }

  private async renew(job: Synthesis): Promise<void> {
    try {
      const result = await this.options.dataSource.manager.update(Synthesis, held(job), { leaseUntil: this.leaseEnd() });
      if (affectedRows(result) !== 1) this.options.logger.warn({ synthesisId: job.id }, 'synthesis lease lost');
    } catch (err) {
      this.options.logger.warn({ err, synthesisId: job.id }, 'synthesis lease not renewed; retrying');
    }
  }

  /** A job whose workers kept dying is failed rather than taken forever. */
  private giveUp(seen: Synthesis, now: Date): Promise<boolean> {
    return inTransaction(this.options.dataSource, async (m) => {
      const error = `The synthesis was interrupted ${seen.attempts} times (its worker stopped) and is not tried again.`;
      const failed = { state: SynthesisState.FAILED, error, finishedAt: now, leaseUntil: null, workerId: null };
      const result = await m.update(Synthesis, { id: seen.id, state: SynthesisState.RUNNING, attempts: seen.attempts, leaseUntil: LessThan(now) }, failed);
      if (affectedRows(result) !== 1) return false;
      await this.recordOutcome(m, { ...(await m.findOneByOrFail(Synthesis, { id: seen.id })) });
      return true;
    });
  }

  /**
   * Takes no more jobs, lets running ones finish for a while, then hands the rest back to the
   * queue (without counting the attempt), so another worker starts them at once.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.poller?.stop();
    const grace = new Promise<void>((resolve) => setTimeout(resolve, this.options.stopGraceMs ?? 10_000).unref());
    await Promise.race([Promise.all(this.running.values()), grace]);
    for (const id of this.running.keys()) {
      this.released.add(id);
      clearInterval(this.renewals.get(id));
      await this.options.dataSource.manager
        .createQueryBuilder()
        .update(Synthesis)
        .set({ state: SynthesisState.QUEUED, workerId: null, leaseUntil: null, attempts: () => 'attempts - 1' })
        .where({ id, workerId: this.id, state: SynthesisState.RUNNING })
        .execute()
        .catch((err) => this.options.logger.warn({ err, synthesisId: id }, 'could not hand the job back; it is taken again when its lease ends'));
    }
  }
}
