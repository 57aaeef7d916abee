// An import, on the kit's fair batched runner (lib/kit/jobs.ts): the first batch reads the
// uploaded file (a piece at a time, through the format's streaming reader) into records, one JSON
// object a line, in the blob store; every later batch applies at most IMPORT_BATCH_RECORDS of
// them and goes back to the queue, so another user's import waits at most one batch. Records are
// applied through the owning module's own GraphQL mutations, via the gateway, as the user (a token
// of their session narrowed to what imports need, signed for the batch), so that the module's caps,
// sizes, duplicate checks, enrichment queue and events apply as to any capture.
//
// - A duplicate (the vault's 409 with `existingId`) counts in `duplicates`: the same file twice creates nothing.
// - A record the module refuses (not an http link, too long) counts in `skipped` with an error.
// - A cap reached (409 with `details.limit`) ends the job `failed` with that error; what was imported stays.
// - The user's waiting-work limit (429) pauses the batch for its Retry-After, and the record is tried again.
// - A session that ended (401) fails the job: import the file again to go on (duplicates are skipped).
import type { GraphQLFormattedError } from 'graphql';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../lib/blob-store';
import type { Config } from '../../lib/config';
import { affectedRows } from '../../lib/database/portable';
import type { GatewayLink } from '../../lib/gateway-link';
import { JobHandler, JobLost } from '../../lib/kit/jobs';
import type { Logger } from '../../lib/logger';
import { recordEvent } from '../../lib/outbox';
import type { TokenSigner } from '../../lib/tokens';
import { TransferCounts, TransferError, TransferJob } from './entities/transfer-job';
import { BookmarkRecord, NetscapeReader, NotNetscapeError } from './formats/netscape';
import { jobEventData } from './transfer-service';
import { IMPORT_JOB_KIND, MAX_JOB_ERRORS, pieceKey, recordsKey } from './transfer-rules';

/** Scopes an import's token carries, of those the user has: what creating their data needs. */
const IMPORT_SCOPES = ['vault:read', 'vault:write', 'notes:read', 'notes:write', 'hubs:read', 'hubs:write'];
/** The life of a batch's token: a batch is far shorter. */
const TOKEN_TTL_SECONDS = 300;
/** Bytes of records read per batch: far more than IMPORT_BATCH_RECORDS lines of at most ~10 KiB. */
const RECORDS_WINDOW = 1024 * 1024;
/** The longest pause for the user's waiting-work limit within a batch. */
const MAX_PAUSE_MS = 5000;

/** A failure that ends the job with its message (as opposed to a passing fault, which the kit retries). */
export class ImportFailed extends Error {}

const CAPTURE_LINK = `mutation ImportBookmark($url: String!, $title: String, $tags: [String!]) {
  captureVaultItem(url: $url, title: $title, tags: $tags) { id }
}`;

export interface ImportRunnerDeps {
  dataSource: DataSource;
  store: BlobStore;
  gateway?: GatewayLink;
  signer: () => TokenSigner | null;
  config: Pick<Config, 'IMPORT_BATCH_RECORDS' | 'IMPORT_MAX_RECORDS'>;
  logger?: Logger;
  /** For tests: called before each record is applied. */
  beforeRecord?: () => Promise<void>;
}

type Outcome = 'created' | 'duplicate' | 'skipped' | { pause: number } | { fail: string };

export function importHandler(deps: ImportRunnerDeps): JobHandler<{ transferId: string }> {
  const { dataSource, store } = deps;

  async function fail(job: TransferJob, message: string, path = ''): Promise<void> {
    await dataSource.transaction(async (m) => {
      const errors = [...job.errors, { path, message }].slice(-MAX_JOB_ERRORS);
      const r = await m
        .createQueryBuilder()
        .update(TransferJob)
        .set({ state: 'failed', finishedAt: new Date(), errors })
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
    await removeBlobs(job);
  }

  async function removeBlobs(job: TransferJob): Promise<void> {
    for (let n = 0; n < job.pieces; n++) await store.delete(pieceKey(job.id, n));
    await store.delete(recordsKey(job.id));
  }

  /** The uploaded file, read a piece at a time into records (one JSON line each). Answers how many. */
  async function readFile(job: TransferJob): Promise<number> {
    const writer = await store.begin(`${recordsKey(job.id)}.part`);
    let count = 0;
    let lines: string[] = [];
    const reader = new NetscapeReader((record: BookmarkRecord) => {
      count++;
      if (count > deps.config.IMPORT_MAX_RECORDS)
        throw new ImportFailed(
          `The file holds more than ${deps.config.IMPORT_MAX_RECORDS} bookmarks (IMPORT_MAX_RECORDS).`,
        );
      lines.push(JSON.stringify(record));
    });
    try {
      for (let n = 0; n < job.pieces; n++) {
        const size = await store.size(pieceKey(job.id, n));
        const bytes = size === null ? null : await store.read(pieceKey(job.id, n), 0, size);
        if (!bytes) throw new ImportFailed('The uploaded file is gone; import it again.');
        reader.write(bytes);
        if (lines.length) {
          await writer.append(Buffer.from(lines.join('\n') + '\n'));
          lines = [];
        }
      }
      reader.end();
      if (lines.length) await writer.append(Buffer.from(lines.join('\n') + '\n'));
      await writer.commit(recordsKey(job.id));
    } catch (err) {
      await writer.abort();
      if (err instanceof NotNetscapeError) throw new ImportFailed(err.message);
      throw err;
    }
    // The pieces are no longer needed: the records are what later batches read.
    for (let n = 0; n < job.pieces; n++) await store.delete(pieceKey(job.id, n));
    return count;
  }

  function tokenFor(job: TransferJob): string {
    const signer = deps.signer();
    if (!signer)
      throw new ImportFailed(
        'This server cannot act for you in the background (the transfer module has no signing key, JWT_PRIVATE_KEY).',
      );
    const p = job.principal;
    return signer.sign(
      {
        userId: p.userId,
        sessionId: p.sessionId,
        roles: p.roles,
        scopes: p.scopes.filter((s) => IMPORT_SCOPES.includes(s)),
      },
      'access',
      TOKEN_TTL_SECONDS,
    ).token;
  }

  async function capture(token: string, record: BookmarkRecord): Promise<Outcome> {
    if (!/^https?:\/\//i.test(record.url)) return 'skipped';
    if (!deps.gateway?.bound) throw new ImportFailed('This server has no gateway to import through (GATEWAY_URL).');
    const result = await deps.gateway.execute({
      query: CAPTURE_LINK,
      variables: { url: record.url, title: record.title || null, tags: record.tags.length ? record.tags : null },
      headers: { authorization: `Bearer ${token}` },
      clientIp: '',
    });
    const error = result.errors?.[0];
    if (!error) return 'created';
    return classify(error);
  }

  function classify(error: GraphQLFormattedError): Outcome {
    const ext = (error.extensions ?? {}) as {
      code?: string;
      details?: { existingId?: string; limit?: string; max?: number };
      retryAfter?: number;
    };
    if (ext.code === 'conflict' && ext.details?.existingId) return 'duplicate';
    if (ext.code === 'conflict' && ext.details?.limit)
      return {
        fail: `${error.message} (${ext.details.limit}: at most ${ext.details.max ?? '?'}); what was imported before stays.`,
      };
    if (ext.code === 'rate_limit_exceeded') return { pause: Math.min(MAX_PAUSE_MS, (ext.retryAfter ?? 1) * 1000) };
    if (ext.code === 'unauthorized' || ext.code === 'forbidden')
      return { fail: `Your session no longer allows this import (${error.message}); import the file again to go on.` };
    if (ext.code === 'validation_error' || ext.code === 'payload_too_large' || ext.code === 'conflict')
      return 'skipped';
    throw new Error(`import record: ${ext.code ?? 'error'}: ${error.message}`); // passing: the kit tries the batch again
  }

  return {
    kind: IMPORT_JOB_KIND,
    batchRows: 1,
    async batch(ctx) {
      const job = await dataSource.manager.findOneBy(TransferJob, { id: ctx.job.params.transferId });
      if (!job) return false;
      if (job.state !== 'queued' && job.state !== 'running') {
        await removeBlobs(job);
        return false;
      }
      try {
        if (job.cursor === null) {
          const total = await readFile(job);
          await ctx.transaction(async (m) => {
            await m
              .createQueryBuilder()
              .update(TransferJob)
              .set({ cursor: 0, total, state: 'running' })
              .where('id = :id AND state IN (:...states)', { id: job.id, states: ['queued', 'running'] })
              .execute();
          });
          return true;
        }
        return await applyBatch(ctx, job);
      } catch (err) {
        if (err instanceof JobLost) throw err;
        if (err instanceof ImportFailed) {
          await fail(job, err.message);
          return false;
        }
        throw err;
      }
    },
  };

  async function applyBatch(
    ctx: Parameters<JobHandler<{ transferId: string }>['batch']>[0],
    job: TransferJob,
  ): Promise<boolean> {
    const window = (await store.read(recordsKey(job.id), job.cursor!, RECORDS_WINDOW)) ?? Buffer.alloc(0);
    const counts: TransferCounts = { ...job.counts };
    const errors: TransferError[] = [...job.errors];
    let cursor = job.cursor!;
    let done = job.done;
    let failure: string | null = null;
    let token: string | undefined;
    let at = 0;
    for (let n = 0; n < deps.config.IMPORT_BATCH_RECORDS; n++) {
      const end = window.indexOf(0x0a, at);
      if (end < 0) break;
      const record = JSON.parse(window.subarray(at, end).toString('utf8')) as BookmarkRecord;
      await deps.beforeRecord?.();
      token ??= tokenFor(job);
      const outcome = await capture(token, record);
      if (typeof outcome === 'object' && 'pause' in outcome) {
        await new Promise((resolve) => setTimeout(resolve, outcome.pause));
        break; // this record again, in the next batch
      }
      if (typeof outcome === 'object') {
        failure = outcome.fail;
        break;
      }
      if (outcome === 'created') counts.vaultItems++;
      else if (outcome === 'duplicate') counts.duplicates++;
      else {
        counts.skipped++;
        if (errors.length < MAX_JOB_ERRORS)
          errors.push({
            path: record.path,
            message: /^https?:\/\//i.test(record.url)
              ? 'the vault refused this link'
              : `not an http(s) link: ${record.url.slice(0, 100)}`,
          });
      }
      at = end + 1;
      cursor = job.cursor! + at;
      done++;
    }
    const finished = failure === null && done >= job.total;
    const now = new Date();
    const progressed = await ctx.transaction(async (m) => {
      const state = failure !== null ? 'failed' : finished ? 'succeeded' : 'running';
      if (failure !== null) errors.push({ path: '', message: failure });
      const r = await m
        .createQueryBuilder()
        .update(TransferJob)
        .set({
          cursor,
          done,
          counts,
          errors: errors.slice(-MAX_JOB_ERRORS),
          state,
          ...(state !== 'running' ? { finishedAt: now } : {}),
        })
        .where('id = :id AND state IN (:...states)', { id: job.id, states: ['queued', 'running'] })
        .execute();
      if (affectedRows(r) !== 1) return false; // canceled meanwhile: what was done stays
      const row = await m.findOneByOrFail(TransferJob, { id: job.id });
      if (state !== 'running') {
        await recordEvent(m, {
          type: 'import.finished',
          userId: job.ownerId,
          resourceId: job.id,
          data: { ...jobEventData(row), ...(failure ? { error: failure } : {}) },
        });
      } else if (!job.progressAt || now.getTime() - job.progressAt.getTime() >= 1000) {
        await m.update(TransferJob, { id: job.id }, { progressAt: now });
        await recordEvent(m, {
          type: 'import.progress',
          userId: job.ownerId,
          resourceId: job.id,
          data: jobEventData(row),
        });
      }
      return state === 'running';
    });
    if (!progressed) await removeBlobs(job);
    return progressed;
  }
}
