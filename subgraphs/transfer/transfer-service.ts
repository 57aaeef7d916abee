// The transfer module's rules for imports: a job row per upload, its file received in pieces
// through GraphQL (the facade streams the raw request body into them, never whole in memory) and
// stored in the blob store, then queued on the kit's fair job runner (import-runner.ts). Every
// change of state and its event are written in one transaction (the outbox).
import { v7 as uuidv7 } from 'uuid';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { BlobStore } from '../../lib/blob-store';
import { affectedRows, isUniqueViolation } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError } from '../../lib/errors';
import type { JobQueue } from '../../lib/kit/jobs';
import type { UserCascadeBatch } from '../../lib/kit/user-cascade';
import { recordEvent } from '../../lib/outbox';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import type { Principal } from '../../lib/tokens';
import { emptyCounts, FINISHED_STATES, TransferJob } from './entities/transfer-job';
import {
  EXPORT_JOB_KIND,
  exportKey,
  IMPORT_FORMATS,
  IMPORT_JOB_KIND,
  ImportFormat,
  pieceKey,
  recordsKey,
} from './transfer-rules';

const ORDER: PageOrder<TransferJob> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'DESC' };

/** The largest piece of an upload one call takes (the facade sends 512 KiB). */
export const MAX_PIECE_BYTES = 1024 * 1024;

/** What import.* events carry. */
export const jobEventData = (job: TransferJob) => ({
  import_id: job.id,
  format: job.format,
  state: job.state,
  progress: { done: job.done, total: job.total },
  counts: {
    notes: job.counts.notes,
    folders: job.counts.folders,
    vault_items: job.counts.vaultItems,
    hubs: job.counts.hubs,
    skipped: job.counts.skipped,
    duplicates: job.counts.duplicates,
  },
});

export interface TransferSettings {
  maxBytes: number;
  /** Days an export's zip is kept (EXPORT_RETENTION_DAYS). */
  exportDays: number;
}

/** The most one export chunk read answers. */
export const MAX_EXPORT_CHUNK = 1024 * 1024;

export class TransferService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly store: BlobStore,
    private readonly queue: JobQueue,
    private readonly settings: TransferSettings,
  ) {}

  /** A new import, waiting for its file: its pieces come with `appendUpload`, then `finishUpload` queues it. */
  async beginImport(principal: Principal, format: string, targetFolderId?: string | null): Promise<TransferJob> {
    if (!IMPORT_FORMATS.includes(format as ImportFormat))
      throw new AppError('validation_error', `Unknown import format "${format}".`, {
        format: [`must be one of ${IMPORT_FORMATS.join(', ')}`],
      });
    const job = this.dataSource.manager.create(TransferJob, {
      id: uuidv7(),
      ownerId: principal.userId,
      direction: 'import',
      format,
      state: 'queued',
      uploaded: false,
      bytes: 0,
      pieces: 0,
      cursor: null,
      done: 0,
      total: 0,
      counts: emptyCounts(),
      errors: [],
      targetFolderId: targetFolderId ?? null,
      options: null,
      activeOwner: null,
      principal: {
        userId: principal.userId,
        sessionId: principal.sessionId,
        roles: [...principal.roles],
        scopes: [...principal.scopes],
      },
      progressAt: null,
      createdAt: new Date(),
      finishedAt: null,
    });
    await this.dataSource.manager.insert(TransferJob, job);
    return job;
  }

  /** One piece of the file at `offset` (the bytes received so far): stored, then counted. */
  async appendUpload(ownerId: string, id: string, offset: number, bytes: Buffer): Promise<number> {
    const job = await this.get(ownerId, id, 'import');
    if (job.uploaded || job.state !== 'queued')
      throw new AppError('conflict', 'This import has already received its whole file.');
    if (offset !== job.bytes)
      throw new AppError('conflict', `The next piece starts at byte ${job.bytes}, not ${offset}.`, {
        expectedOffset: job.bytes,
      });
    if (bytes.length > MAX_PIECE_BYTES)
      throw new AppError('payload_too_large', `A piece holds at most ${MAX_PIECE_BYTES} bytes.`);
    if (job.bytes + bytes.length > this.settings.maxBytes) {
      await this.discard(job);
      throw new AppError(
        'payload_too_large',
        `An import file holds at most ${this.settings.maxBytes} bytes (IMPORT_MAX_BYTES).`,
        { limit: 'IMPORT_MAX_BYTES', max: this.settings.maxBytes },
      );
    }
    if (!bytes.length) return job.bytes;
    const key = pieceKey(job.id, job.pieces);
    await this.store.put(key, bytes);
    const moved = await this.dataSource.manager
      .createQueryBuilder()
      .update(TransferJob)
      .set({ bytes: () => `bytes + ${bytes.length}`, pieces: () => 'pieces + 1' })
      .where('id = :id AND bytes = :offset AND pieces = :pieces AND uploaded = :no', {
        id,
        offset,
        pieces: job.pieces,
        no: false,
      })
      .execute();
    if (affectedRows(moved) !== 1)
      throw new AppError('conflict', 'Another piece of this import was received at the same offset.');
    return job.bytes + bytes.length;
  }

  /** The whole file is in: the job is queued on the fair runner (429 past JOBS_PENDING_PER_USER). */
  async finishUpload(ownerId: string, id: string): Promise<TransferJob> {
    const job = await this.get(ownerId, id, 'import');
    if (job.uploaded) return job;
    if (job.state !== 'queued') throw new AppError('conflict', `This import is ${job.state}.`);
    if (job.bytes === 0) {
      await this.discard(job);
      throw new AppError('validation_error', 'The import file is empty.', { body: ['must not be empty'] });
    }
    try {
      await this.queue.request({ kind: IMPORT_JOB_KIND, ownerId, params: { transferId: id } }, async (m) => {
        const done = await m.update(TransferJob, { id, uploaded: false }, { uploaded: true });
        if (affectedRows(done) !== 1) throw new AppError('conflict', 'This import was finished by another request.');
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'rate_limit_exceeded') await this.discard(job);
      throw err;
    }
    return { ...job, uploaded: true };
  }

  /** An upload given up (the client went away, or the body was too large): its pieces and row go, nothing else was written. */
  async abortUpload(ownerId: string, id: string): Promise<boolean> {
    const job = await this.get(ownerId, id, 'import');
    if (job.uploaded) return false;
    await this.discard(job);
    return true;
  }

  private async discard(job: TransferJob): Promise<void> {
    await this.dataSource.manager.delete(TransferJob, { id: job.id, uploaded: false });
    await this.removeBlobs(job);
  }

  /** The uploaded pieces and the parsed records of a job. */
  async removeBlobs(job: Pick<TransferJob, 'id' | 'pieces'>): Promise<void> {
    await this.store.delete(exportKey(job.id));
    for (let n = 0; n < job.pieces; n++) await this.store.delete(pieceKey(job.id, n));
    await this.store.delete(recordsKey(job.id));
  }

  /** A new export of the whole account (what `include` names): 409 while another of the user's runs. */
  async startExport(principal: Principal, include: string[]): Promise<TransferJob> {
    const job = this.dataSource.manager.create(TransferJob, {
      id: uuidv7(),
      ownerId: principal.userId,
      direction: 'export',
      format: 'zip',
      state: 'queued',
      uploaded: true,
      bytes: 0,
      pieces: 0,
      cursor: null,
      done: 0,
      total: 0,
      counts: emptyCounts(),
      errors: [],
      targetFolderId: null,
      options: { include: [...new Set(include)] },
      activeOwner: principal.userId,
      principal: {
        userId: principal.userId,
        sessionId: principal.sessionId,
        roles: [...principal.roles],
        scopes: [...principal.scopes],
      },
      progressAt: null,
      createdAt: new Date(),
      finishedAt: null,
    });
    try {
      await this.queue.request(
        { kind: EXPORT_JOB_KIND, ownerId: principal.userId, params: { transferId: job.id } },
        (m) => m.insert(TransferJob, job).then(() => undefined),
      );
    } catch (err) {
      if (isUniqueViolation(err))
        throw new AppError('conflict', 'An export of yours is already running; one runs at a time.', {
          reason: 'export_running',
        });
      throw err;
    }
    return job;
  }

  /** A finished export's zip: its size and an ETag; null bytes until it has succeeded (then: conflict). */
  async exportFile(ownerId: string, id: string): Promise<{ bytes: number; etag: string; fileName: string }> {
    const job = await this.get(ownerId, id, 'export');
    if (job.state !== 'succeeded')
      throw new AppError('conflict', `The export is ${job.state}; download it once it has succeeded.`);
    const size = await this.store.size(exportKey(id));
    if (size === null) throw new AppError('not_found', 'The export has expired.');
    return { bytes: size, etag: `"${id}"`, fileName: `export-${job.createdAt.toISOString().slice(0, 10)}.zip` };
  }

  async exportChunk(ownerId: string, id: string, offset: number, length: number): Promise<string> {
    await this.get(ownerId, id, 'export');
    const bytes = await this.store.read(exportKey(id), offset, Math.min(length, MAX_EXPORT_CHUNK));
    return (bytes ?? Buffer.alloc(0)).toString('base64');
  }

  /** Removes an export (its zip too); a running one is canceled first. */
  async deleteExport(ownerId: string, id: string): Promise<TransferJob> {
    const job = await this.get(ownerId, id, 'export');
    await this.dataSource.manager.delete(TransferJob, { id, ownerId });
    await this.store.delete(exportKey(id));
    await this.store.delete(`${exportKey(id)}.part`);
    return job;
  }

  /** Another user's job is `not_found`, like an unknown id. */
  async get(ownerId: string, id: string, direction: 'import' | 'export' = 'import'): Promise<TransferJob> {
    const job = await this.dataSource.manager.findOneBy(TransferJob, { id, ownerId, direction });
    if (!job) throw new AppError('not_found', `No such ${direction}.`);
    return job;
  }

  list(ownerId: string, limit: number, cursor?: string | null): Promise<Page<TransferJob>> {
    const query = this.dataSource.manager
      .createQueryBuilder(TransferJob, 'job')
      .where('job.ownerId = :ownerId AND job.direction = :direction', { ownerId, direction: 'import' });
    return pageOf(query, ORDER, limit, cursor);
  }

  /** Cancels a queued or running import: what was imported stays; the runner stops at its next batch. */
  async cancel(ownerId: string, id: string): Promise<TransferJob> {
    const job = await this.get(ownerId, id, 'import');
    if (FINISHED_STATES.includes(job.state)) return job;
    const canceled = await inTransaction(this.dataSource, async (m) => {
      const now = new Date();
      const r = await m
        .createQueryBuilder()
        .update(TransferJob)
        .set({ state: 'canceled', finishedAt: now })
        .where('id = :id AND state IN (:...states)', { id, states: ['queued', 'running'] })
        .execute();
      if (affectedRows(r) !== 1) return null;
      const row = await m.findOneByOrFail(TransferJob, { id });
      await recordEvent(m, { type: 'import.finished', userId: ownerId, resourceId: id, data: jobEventData(row) });
      return row;
    });
    if (!canceled) return this.get(ownerId, id, 'import');
    if (!canceled.uploaded) await this.removeBlobs(canceled);
    return canceled;
  }

  /**
   * Jobs left behind: uploads never finished (the client went away) are removed with their
   * pieces; imports not finished after `staleSeconds` (their runner died over and over) are failed.
   * Answers how many were swept.
   */
  async sweep(staleSeconds: number, now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - staleSeconds * 1000);
    const stale = await this.dataSource.manager
      .createQueryBuilder(TransferJob, 'job')
      .where('job.createdAt < :before AND job.state IN (:...states)', { before, states: ['queued', 'running'] })
      .take(100)
      .getMany();
    for (const job of stale) {
      if (!job.uploaded) {
        await this.discard(job);
        continue;
      }
      const message = `The import did not finish within ${staleSeconds} s (IMPORT_STALE_SECONDS); import the file again (duplicates are skipped).`;
      await inTransaction(this.dataSource, async (m) => {
        const r = await m
          .createQueryBuilder()
          .update(TransferJob)
          .set({ state: 'failed', finishedAt: now, errors: [...job.errors, { path: '', message }].slice(-100) })
          .where('id = :id AND state IN (:...states)', { id: job.id, states: ['queued', 'running'] })
          .execute();
        if (affectedRows(r) !== 1) return;
        const row = await m.findOneByOrFail(TransferJob, { id: job.id });
        await recordEvent(m, {
          type: 'import.finished',
          userId: job.ownerId,
          resourceId: job.id,
          data: { ...jobEventData(row), error: message },
        });
      });
      await this.removeBlobs(job);
    }
    // Exports past their retention go with their zips.
    const expired = await this.dataSource.manager
      .createQueryBuilder(TransferJob, 'job')
      .where('job.direction = :d AND job.createdAt < :at', {
        d: 'export',
        at: new Date(now.getTime() - this.settings.exportDays * 86_400_000),
      })
      .take(100)
      .getMany();
    for (const job of expired) await this.deleteExport(job.ownerId, job.id);
    await this.store.prunePartial(before);
    return stale.length + expired.length;
  }

  /** A deleted user's jobs (the kit's cascade), a batch per transaction, with their stored files. */
  readonly deleteOwnerBatch: UserCascadeBatch = async (ctx) => {
    const ownerId = ctx.job.ownerId;
    const jobs = await this.dataSource.manager.find(TransferJob, { where: { ownerId }, take: ctx.limit });
    if (!jobs.length) return false;
    for (const job of jobs) await this.removeBlobs(job);
    await ctx.transaction(async (m: EntityManager, removed) => {
      const r = await m.delete(TransferJob, { id: In(jobs.map((j) => j.id)), ownerId });
      removed('transfer_jobs', affectedRows(r));
    });
    return true;
  };
}
