// Renders queued syntheses. Jobs are rows; a worker takes one with a conditional UPDATE that
// only one worker can win, holds it under a lease it renews while the engine works, and
// finishes it only while it still holds it (worker id and attempt number fence out a worker
// that lost its lease). A job whose worker died is taken again once the lease has ended.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataSource, EntityManager } from 'typeorm';
import { In, LessThan } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import { fixedSelect, persistedValue } from '../../lib/database/reads';
import { inTransaction, retryOnLockConflict } from '../../lib/database/transactions';
import type { Logger } from '../../lib/logger';
import { secondsSince } from '../../lib/metrics';
import { synthesisRenderSeconds } from './metrics';
import { inLinkedSpan } from '../../lib/tracing';
import { publish } from '../../lib/kit/typed-events';
import { SynthesisCanceled, SynthesisFailed, SynthesisStarted, SynthesisSucceeded } from './events';
import { Poller, startPoller } from '../../lib/poller';
import type { AudioStore, AudioWriter } from './audio/audio-store';
import { pcmBytes, UNKNOWN_SIZE, WAV_HEADER_BYTES, wavHeader } from './audio/wav';
import type { SpeechEngine } from './engine/speech-engine';
import { isEncoded } from './audio/encoders';
import {
  Synthesis,
  synthesisAudioKey,
  synthesisEncodedKey,
  synthesisEncodedKeys,
  synthesisPartialKey,
  SynthesisState,
} from './entities/synthesis';
import { storedTimings } from './synthesis-timings';
import { SynthesisOwner } from './entities/synthesis-owner';
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
  /** The longest pause between looks while no job comes (POLL_MAX_IDLE_MS); unset: always pollMs. */
  maxPollMs?: number;
  /** Longest audio a job may produce (SYNTHESIS_MAX_AUDIO_SECONDS). */
  maxAudioSeconds: number;
  /** How long stop() lets running jobs finish before handing them back to the queue. */
  stopGraceMs?: number;
}

/**
 * Appends pieces in order, one write at a time: pieces that come while a write runs go out
 * together in the next. The first failure is kept and answered by done().
 */
class AppendQueue {
  private pending: Buffer[] = [];
  private writing?: Promise<void>;
  private failure?: unknown;

  constructor(private readonly writer: AudioWriter) {}

  push(bytes: Buffer): void {
    if (this.failure) return;
    this.pending.push(bytes);
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length && !this.failure) await this.writer.append(Buffer.concat(this.pending.splice(0)));
    } catch (err) {
      this.failure = err;
    } finally {
      this.writing = undefined;
    }
  }

  async done(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.failure)
      throw this.failure instanceof Error ? this.failure : new Error('the audio write failed', { cause: this.failure });
  }
}

/** The event of each state a job ends in. */
const OUTCOME_EVENTS: Partial<Record<SynthesisState, typeof SynthesisSucceeded>> = {
  [SynthesisState.SUCCEEDED]: SynthesisSucceeded,
  [SynthesisState.FAILED]: SynthesisFailed,
  [SynthesisState.CANCELED]: SynthesisCanceled,
};

const unique = (jobs: Synthesis[]) => [...new Map(jobs.map((j) => [j.id, j])).values()];

/** The fence: the row is still this worker's, at this attempt, running. */
const held = (job: Synthesis) => ({
  id: job.id,
  workerId: job.workerId!,
  attempts: job.attempts,
  state: SynthesisState.RUNNING,
});

export class SynthesisWorker {
  readonly id = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly running = new Map<string, Promise<void>>();
  /** Jobs handed back by stop(): their engine call may still fail, which is not the job's fault. */
  private readonly released = new Set<string>();
  private readonly renewals = new Map<string, NodeJS.Timeout>();
  /** Aborts the engine call of a running job: it was canceled, or its lease was lost. */
  private readonly aborts = new Map<string, AbortController>();
  private lastHeldCheck = 0;
  private poller?: Poller;
  private claimable?: (params: unknown[]) => Promise<Record<string, unknown>[]>;
  private stopping = false;

  constructor(private readonly options: SynthesisWorkerOptions) {}

  start(): void {
    const { pollMs, maxPollMs, logger } = this.options;
    // Polls for jobs queued by other processes (backing off while none comes); wake() (a job
    // queued here, a job done) looks at once.
    this.poller = startPoller({
      name: 'synthesis worker',
      intervalMs: pollMs,
      maxIntervalMs: maxPollMs,
      work: () => this.fill(),
      logger,
    });
  }

  /** Looks for jobs now: called when this process queues one. */
  wake(): void {
    this.poller?.wake();
  }

  /** Stops rendering a job of this worker: called when this process cancels one. */
  cancel(synthesisId: string): void {
    this.aborts.get(synthesisId)?.abort();
  }

  /** Takes jobs while it has room; true when it took one. */
  private async fill(): Promise<boolean> {
    await this.checkHeld();
    if (this.running.size >= this.options.concurrency || !(await this.anyClaimable())) return false;
    let took = false;
    while (!this.stopping && this.running.size < this.options.concurrency) {
      const job = await this.claimNext();
      if (!job) return took;
      took = true;
      const attributes = {
        'synthesis.id': job.id,
        'synthesis.attempt': job.attempts,
        'synthesis.characters': job.characters,
      };
      const run = inLinkedSpan('synthesis.render', job.traceParent, attributes, () => this.run(job));
      this.running.set(
        job.id,
        run.finally(() => this.running.delete(job.id)),
      );
    }
    return took;
  }

  /**
   * Jobs canceled (or taken over) while this worker renders them, in any process: noticed here at
   * most once a second (lease renewals would notice only every third of the lease).
   */
  private async checkHeld(): Promise<void> {
    if (!this.aborts.size || Date.now() - this.lastHeldCheck < Math.max(this.options.pollMs, 1000)) return;
    this.lastHeldCheck = Date.now();
    const ids = [...this.aborts.keys()];
    const still = await this.options.dataSource.manager.find(Synthesis, {
      select: { id: true },
      where: { id: In(ids), workerId: this.id, state: SynthesisState.RUNNING },
    });
    const held = new Set(still.map((s) => s.id));
    for (const id of ids) if (!held.has(id)) this.cancel(id);
  }

  /**
   * Whether any job is queued, or running on an ended lease: one fixed query for the polls that
   * mostly find none (claimNext's three finds cost most of an idle server's CPU).
   */
  private async anyClaimable(): Promise<boolean> {
    const { dataSource } = this.options;
    if (!this.claimable) {
      const { driver } = dataSource;
      const meta = dataSource.getMetadata(Synthesis);
      const [table, state, lease] = [
        meta.tableName,
        meta.findColumnWithPropertyName('state')!.databaseName,
        meta.findColumnWithPropertyName('leaseUntil')!.databaseName,
      ].map((n) => driver.escape(n));
      this.claimable = fixedSelect(
        dataSource,
        `SELECT CASE WHEN EXISTS (SELECT 1 FROM ${table} WHERE ${state} = ?) OR EXISTS (SELECT 1 FROM ${table} WHERE ${state} = ? AND ${lease} < ?) THEN 1 ELSE 0 END AS found`,
      );
    }
    const [row] = await this.claimable([
      SynthesisState.QUEUED,
      SynthesisState.RUNNING,
      persistedValue(dataSource, Synthesis, 'leaseUntil', new Date()),
    ]);
    return Number(row?.found) === 1;
  }

  /**
   * The next job to take: one whose worker stopped renewing its lease (it was started already),
   * else the oldest queued job of the owner served longest ago (never served: first), so that
   * workers go round the users and one user's backlog delays another's job by at most one job
   * per worker. Null when there is none to win.
   */
  async claimNext(): Promise<Synthesis | null> {
    const { manager } = this.options.dataSource;
    const now = new Date();
    const abandoned = await manager.find(Synthesis, {
      select: { id: true, state: true, attempts: true, ownerId: true },
      where: { state: SynthesisState.RUNNING, leaseUntil: LessThan(now) },
      order: { id: 'ASC' },
      take: 20,
    });
    // Racing workers all see the same heads; one that loses them all falls back to the oldest jobs rather than idle.
    const candidates = unique([...abandoned, ...(await this.nextPerOwner()), ...(await this.oldestQueued())]);
    for (const seen of candidates) {
      const abandoned = seen.state === SynthesisState.RUNNING;
      if (abandoned && seen.attempts >= this.options.maxAttempts) {
        await this.giveUp(seen, now);
        continue;
      }
      // Compare-and-set on (state, attempts): of workers that saw the same row, one changes it,
      // and only that one records synthesis.started (with the attempt) in the same transaction.
      // Only from queued, or from running with an ended lease: never from whatever state the row
      // was read in (a job finished or canceled since the look is not work to take again).
      // A lost lock conflict (deadlock, lock wait timeout) rolled it all back: the same compare-and-set again.
      const job = await retryOnLockConflict(() =>
        inTransaction(this.options.dataSource, async (m) => {
          const result = await m.update(
            Synthesis,
            abandoned
              ? { id: seen.id, state: SynthesisState.RUNNING, attempts: seen.attempts, leaseUntil: LessThan(now) }
              : { id: seen.id, state: SynthesisState.QUEUED, attempts: seen.attempts },
            {
              state: SynthesisState.RUNNING,
              workerId: this.id,
              attempts: seen.attempts + 1,
              leaseUntil: this.leaseEnd(),
              startedAt: now,
            },
          );
          if (affectedRows(result) !== 1) return null;
          const taken = await m.findOneByOrFail(Synthesis, { id: seen.id });
          await publish(m, SynthesisStarted, {
            userId: taken.ownerId,
            resourceId: taken.id,
            data: { ...eventData(taken), attempt: taken.attempts },
          });
          return taken;
        }),
      );
      if (job) {
        await this.served(job.ownerId, now);
        if (abandoned)
          this.options.logger.warn(
            { synthesisId: seen.id, attempt: seen.attempts + 1 },
            'synthesis taken again after its worker stopped renewing',
          );
        return job;
      }
    }
    return null;
  }

  /** Served now: the owner goes to the back of the round (its row is made for jobs queued before there were rows). */
  private async served(ownerId: string, now: Date): Promise<void> {
    const { manager } = this.options.dataSource;
    if (affectedRows(await manager.update(SynthesisOwner, { ownerId }, { lastClaimedAt: now })) === 1) return;
    await manager
      .createQueryBuilder()
      .insert()
      .into(SynthesisOwner)
      .values({ ownerId, lastClaimedAt: now, lastQueuedAt: null })
      .orIgnore()
      .execute();
  }

  private oldestQueued(): Promise<Synthesis[]> {
    return this.options.dataSource.manager.find(Synthesis, {
      select: { id: true, state: true, attempts: true, ownerId: true },
      where: { state: SynthesisState.QUEUED },
      order: { id: 'ASC' },
      take: 20,
    });
  }

  /** Each owner's oldest queued job, the owner whose job was taken longest ago (or never) first. */
  private async nextPerOwner(): Promise<Synthesis[]> {
    const { manager } = this.options.dataSource;
    // NULL (never served) sorts first in ascending order on SQLite and MySQL alike.
    const heads: { id: string }[] = await manager.query(
      `SELECT MIN(s.id) AS id FROM syntheses s LEFT JOIN synthesis_owners o ON o.owner_id = s.owner_id
       WHERE s.state = ? GROUP BY s.owner_id, o.last_claimed_at ORDER BY o.last_claimed_at ASC, MIN(s.id) ASC LIMIT 20`,
      [SynthesisState.QUEUED],
    );
    if (!heads.length) return [];
    // Still queued: a head may have been taken, finished or canceled since the query above.
    const rows = await manager.find(Synthesis, {
      select: { id: true, state: true, attempts: true, ownerId: true },
      where: { id: In(heads.map((h) => h.id)), state: SynthesisState.QUEUED },
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return heads.map((h) => byId.get(h.id)).filter((r): r is Synthesis => !!r);
  }

  private leaseEnd(): Date {
    return new Date(Date.now() + this.options.leaseSeconds * 1000);
  }

  /**
   * Renders the job into its partial file as the engine hands the audio over (a WAV whose header
   * says "length unknown", readable while it grows: what POST /v1/audio/speech streams), then
   * writes the real header, renames the file onto the job's key and records the outcome.
   */
  private async run(job: Synthesis): Promise<void> {
    const { engine, store, logger, leaseSeconds } = this.options;
    this.renewals.set(
      job.id,
      setInterval(() => void this.renew(job), (leaseSeconds * 1000) / 3),
    );
    const abort = new AbortController();
    this.aborts.set(job.id, abort);
    let stage = 'render';
    let writer: AudioWriter | undefined;
    // The format asked for by POST /v1/audio/speech, encoded beside the WAV while it renders.
    const format = job.streamFormat && isEncoded(job.streamFormat) ? job.streamFormat : undefined;
    let encodedWriter: AudioWriter | undefined;
    try {
      stage = 'store';
      writer = await store.begin(synthesisPartialKey(job));
      if (format) encodedWriter = await store.begin(synthesisPartialKey(job, format));
      stage = 'render';
      const out = new AppendQueue(writer);
      const encodedOut = encodedWriter && new AppendQueue(encodedWriter);
      let rate = 0;
      let samples = 0;
      const onAudio = (piece: Int16Array, sampleRate: number, encoded?: Uint8Array) => {
        if (encoded?.length) encodedOut?.push(Buffer.from(encoded.buffer, encoded.byteOffset, encoded.length));
        if (!piece.length) return;
        // The header goes with the first samples: a reader finds the file empty, or with audio.
        const bytes = samples
          ? pcmBytes(piece)
          : Buffer.concat([wavHeader((rate = sampleRate), UNKNOWN_SIZE), pcmBytes(piece)]);
        samples += piece.length;
        out.push(bytes);
      };
      const renderStart = process.hrtime.bigint();
      const rest = await engine
        .synthesize(job, {
          maxSeconds: this.options.maxAudioSeconds,
          signal: abort.signal,
          sampleRate: job.sampleRate ?? undefined,
          encode: format,
          onAudio,
        })
        .catch((err) => {
          // Stopped because the job was canceled (or taken over by another worker): no failure.
          const outcome = abort.signal.aborted ? 'canceled' : 'failed';
          synthesisRenderSeconds.observe({ outcome }, secondsSince(renderStart));
          throw err;
        });
      synthesisRenderSeconds.observe({ outcome: 'succeeded' }, secondsSince(renderStart));
      onAudio(rest.samples, rest.sampleRate); // an engine that does not stream answers it all here
      for (const bytes of rest.encoded ?? []) onAudio(new Int16Array(0), rest.sampleRate, bytes);
      if (!samples) throw new Error('the speech engine produced no audio for this text');
      stage = 'store';
      await out.done();
      await encodedOut?.done();
      const encodedPartial = encodedWriter;
      const key = synthesisAudioKey(job.id);
      const partial = writer;
      let published = false;
      // Renamed onto the key inside finish's transaction, only once the row is known to be still
      // this worker's (and before it is marked succeeded): a take that lost its lease never
      // replaces the current take's audio.
      const publish = async () => {
        // The encoding first: once the WAV is there, a reader may look for it.
        const encodedBytes = encodedPartial
          ? await encodedPartial.commit(synthesisEncodedKey(job.id, format!), rest.encodedPatch)
          : null;
        encodedWriter = undefined;
        const audioBytes = await partial.commit(key, { offset: 0, bytes: wavHeader(rate, samples * 2) });
        published = true;
        writer = undefined;
        if (audioBytes !== WAV_HEADER_BYTES + samples * 2)
          throw new Error(`stored ${audioBytes} bytes of audio, not ${WAV_HEADER_BYTES + samples * 2}`);
        return { audioBytes, encodedBytes, timings: storedTimings(rest.timings) };
      };
      const done = await this.finish(
        job,
        { state: SynthesisState.SUCCEEDED, durationMs: Math.round((samples * 1000) / rate), audioKey: key },
        publish,
      );
      if (!done) {
        if (published) await this.lostAfterStoring(job, key);
        else {
          writer = undefined;
          await encodedWriter?.abort().catch(() => undefined);
          await partial
            .abort()
            .catch((e) => logger.warn({ err: e, synthesisId: job.id }, 'could not remove the partial audio'));
          logger.warn(
            { synthesisId: job.id },
            'synthesis finished after its lease was lost; its audio is dropped, the result is left to the current holder',
          );
        }
      }
    } catch (err) {
      await encodedWriter?.abort().catch(() => undefined);
      await writer
        ?.abort()
        .catch((e) => logger.warn({ err: e, synthesisId: job.id }, 'could not remove the partial audio'));
      if (this.released.has(job.id)) return;
      if (abort.signal.aborted) {
        // Canceled, or taken over: not this worker's to record.
        logger.info(
          { synthesisId: job.id },
          "synthesis rendering stopped: the job was canceled or is no longer this worker's",
        );
        await this.lostAfterStoring(job, synthesisAudioKey(job.id)).catch(() => undefined);
        return;
      }
      // A render refused for the request's sake (too long, no audio) is expected: its reason, no stack.
      if (stage === 'render')
        logger.warn({ synthesisId: job.id, stage, reason: String((err as Error)?.message ?? err) }, 'synthesis failed');
      else logger.error({ err, synthesisId: job.id, stage }, 'synthesis failed');
      // The engine's reasons are about the request; storage and database errors are ours, and stay in the log.
      const error =
        stage === 'render'
          ? String((err as Error)?.message ?? err).slice(0, 500)
          : 'The audio could not be stored; request the synthesis again.';
      await this.finish(job, { state: SynthesisState.FAILED, error }).catch((e) =>
        logger.error(
          { err: e, synthesisId: job.id },
          'could not record the failure; the job is taken again when its lease ends',
        ),
      );
    } finally {
      this.aborts.delete(job.id);
      clearInterval(this.renewals.get(job.id));
      this.renewals.delete(job.id);
      this.released.delete(job.id);
      this.wake(); // room for the next job
    }
  }

  /**
   * The job stopped being this worker's before it could record its audio. A job taken over by
   * another worker keeps the audio (that worker writes the same key); a canceled or deleted one
   * must not keep any.
   */
  private async lostAfterStoring(job: Synthesis, key: string): Promise<void> {
    const now = await this.options.dataSource.manager.findOne(Synthesis, {
      select: { id: true, state: true },
      where: { id: job.id },
    });
    if (!now || now.state === SynthesisState.CANCELED) {
      for (const k of [key, ...synthesisEncodedKeys(job.id)]) await this.options.store.delete(k);
      this.options.logger.info({ synthesisId: job.id }, 'synthesis canceled while it rendered; its audio is removed');
    } else if (now.state !== SynthesisState.FAILED) {
      this.options.logger.warn(
        { synthesisId: job.id },
        'synthesis finished after its lease was lost; the result is left to the current holder',
      );
    }
  }

  /**
   * Records the outcome and its event in one transaction, if the job is still this worker's.
   * `publish` (the rename of the audio onto its key) runs in that transaction after the row is
   * locked and found still this worker's, before the outcome is written: false without calling it
   * when the job is no longer ours. Run again on a lost lock conflict; the audio is published once.
   */
  private finish(
    job: Synthesis,
    outcome: Partial<Synthesis>,
    publish?: () => Promise<Partial<Synthesis>>,
  ): Promise<boolean> {
    const { dataSource } = this.options;
    let published: Partial<Synthesis> | undefined;
    return retryOnLockConflict(() =>
      inTransaction(dataSource, async (m) => {
        if (publish) {
          // The row lock (MariaDB) holds off a takeover or a cancel until this commits; SQLite has one writer.
          const query = m.createQueryBuilder(Synthesis, 's').select('s.id').where(held(job));
          if (dataSource.options.type !== 'better-sqlite3') query.setLock('pessimistic_write');
          if (!(await query.getOne())) return false;
          published ??= await publish();
        }
        const finished = { ...outcome, ...published, finishedAt: new Date(), leaseUntil: null, workerId: null };
        if (affectedRows(await m.update(Synthesis, held(job), finished)) !== 1) return false;
        await this.recordOutcome(m, { ...job, ...finished });
        return true;
      }),
    );
  }

  private recordOutcome(m: EntityManager, s: Synthesis) {
    const event = OUTCOME_EVENTS[s.state];
    if (!event) throw new Error(`synthesis ${s.id}: ${s.state} is not an outcome`);
    return publish(m, event, { userId: s.ownerId, resourceId: s.id, data: eventData(s) });
  }

  private async renew(job: Synthesis): Promise<void> {
    try {
      const result = await this.options.dataSource.manager.update(Synthesis, held(job), {
        leaseUntil: this.leaseEnd(),
      });
      if (affectedRows(result) !== 1) {
        // Canceled, or taken by another worker: stop rendering what nobody will record.
        this.options.logger.warn({ synthesisId: job.id }, 'synthesis lease lost');
        this.cancel(job.id);
      }
    } catch (err) {
      this.options.logger.warn({ err, synthesisId: job.id }, 'synthesis lease not renewed; retrying');
    }
  }

  /** A job whose workers kept dying is failed rather than taken forever. */
  private giveUp(seen: Synthesis, now: Date): Promise<boolean> {
    return retryOnLockConflict(() =>
      inTransaction(this.options.dataSource, async (m) => {
        const error = `The synthesis was interrupted ${seen.attempts} times (its worker stopped) and is not tried again.`;
        const failed = { state: SynthesisState.FAILED, error, finishedAt: now, leaseUntil: null, workerId: null };
        const result = await m.update(
          Synthesis,
          { id: seen.id, state: SynthesisState.RUNNING, attempts: seen.attempts, leaseUntil: LessThan(now) },
          failed,
        );
        if (affectedRows(result) !== 1) return false;
        await this.recordOutcome(m, { ...(await m.findOneByOrFail(Synthesis, { id: seen.id })) });
        return true;
      }),
    );
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
        .catch((err) =>
          this.options.logger.warn(
            { err, synthesisId: id },
            'could not hand the job back; it is taken again when its lease ends',
          ),
        );
    }
  }
}
