// Enriches captured items in the background: fetches links (behind the SSRF guard), parses
// pages and files in the parser thread, classifies, and records `ready` or `failed`. Jobs are
// the pending rows themselves, leased as syntheses are (subgraphs/tts/synthesis-worker.ts): a
// worker takes one with a conditional UPDATE only one worker can win, renews the lease while it
// works and finishes only while it still holds it (worker id and attempt fence out a worker that
// lost it); a job whose worker died is taken again once the lease has ended. The same loop
// trains the users' classifiers on the categories they set by hand, and carries out the
// deletions of deleted users in batches.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DataSource } from 'typeorm';
import { IsNull, LessThan, MoreThan } from 'typeorm';
import type { Dispatcher } from 'undici';
import type { BlobStore } from '../../lib/blob-store';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction, retryOnLockConflict } from '../../lib/database/transactions';
import type { Logger } from '../../lib/logger';
import { secondsSince } from '../../lib/metrics';
import { vaultEnrichments, vaultEnrichSeconds } from './metrics';
import { publish } from '../../lib/kit/typed-events';
import { VaultItemClassified, VaultItemFailed, VaultItemReady } from './events';
import { Poller, startPoller } from '../../lib/poller';
import { listenAcross, wakesAcrossProcesses } from '../../lib/wakeups';
import { classify, documentWords, trainModel } from './classifier';
import { ClassifiedBy, VaultItem, VaultItemKind, VaultItemState } from './entities/vault-item';
import { VaultClassifier } from './entities/vault-classifier';
import { fetchPage, FetchError, FetchLimits } from './fetcher';
import { parseHttpUrl } from './url-key';
import { PageParser } from './parser-thread';
import { classifiedEvent, excerptOf, itemEventData, itemSearchWords, syncTags, vaultTopic } from './item-rows';
import type { VaultCaps } from './limits';
import type { Predictors } from './predictors';
import type { VaultRules } from './rule-service';

export interface VaultWorkerOptions {
  dataSource: DataSource;
  caps: VaultCaps;
  rules: VaultRules;
  predictors: Predictors;
  store: BlobStore;
  dispatcher: Dispatcher;
  parser: PageParser;
  logger: Logger;
  concurrency: number;
  leaseSeconds: number;
  maxAttempts: number;
  pollMs: number;
  maxPollMs?: number;
  fetch: FetchLimits;
  textMaxChars: number;
  minConfidence: number;
  keywordTags: number;
}

/** Items learned per training transaction. */
const TRAIN_BATCH = 200;

const HTML = /^(text\/html|application\/xhtml\+xml)$/;
const TEXTUAL = /^(text\/|application\/(json|xml))/;

type Outcome = Partial<VaultItem>;

export class VaultWorker {
  readonly id = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly running = new Map<string, Promise<void>>();
  private poller?: Poller;
  private stopping = false;
  /** With wake-ups across processes: set for the earliest lease end of a job held elsewhere (watchLeases()). */
  private leaseTimer?: NodeJS.Timeout;

  constructor(private readonly options: VaultWorkerOptions) {}

  start(): void {
    const { pollMs, maxPollMs, logger, dataSource } = this.options;
    // A capture committed in this process wakes it at once. Other processes' captures are found
    // by a look that backs off to maxPollMs while nothing comes, or, with wake-ups across
    // processes (EVENT_LOG_URL), by their wake-ups (vaultWorkAdded()) and a timer for the end of
    // a lease held elsewhere: no poll while idle.
    const topic = vaultTopic(dataSource);
    this.poller = startPoller({
      name: 'vault worker',
      intervalMs: pollMs,
      maxIntervalMs: maxPollMs,
      wakeOn: dataSource,
      wakeWith: (wake) => listenAcross(topic, wake),
      idlePoll: !wakesAcrossProcesses(),
      work: () => this.fillThenWatchLeases(),
      logger,
    });
  }

  wake(): void {
    this.poller?.wake();
  }

  /**
   * One fixed query before the finds: is anything pending (or leased: busy elsewhere), waiting to
   * be learned, or a deleted user's vault to remove? An idle process asks only this, once a pause.
   */
  private async anyWork(): Promise<boolean> {
    const [row]: { w: string | number }[] = await this.options.dataSource.query(
      `SELECT (CASE WHEN EXISTS (SELECT 1 FROM vault_items WHERE state = 'pending')
        OR EXISTS (SELECT 1 FROM vault_items WHERE train_pending = 1) THEN 1 ELSE 0 END) AS w`,
    );
    return Number(row?.w) === 1;
  }

  /**
   * fill(); then, when the worker does not poll, a timer for the earliest end of a lease of a
   * pending job (its worker may die: the job is taken again then). None: no timer, no query.
   */
  private async fillThenWatchLeases(): Promise<boolean> {
    const found = await this.fill();
    if (found || this.stopping || !wakesAcrossProcesses()) return found;
    const held = await this.options.dataSource.manager.findOne(VaultItem, {
      select: { id: true, leaseUntil: true },
      where: { state: VaultItemState.PENDING, leaseUntil: MoreThan(new Date()) },
      order: { leaseUntil: 'ASC' },
    });
    clearTimeout(this.leaseTimer);
    if (held?.leaseUntil) {
      const inMs = Math.max(0, held.leaseUntil.getTime() - Date.now()) + 50;
      this.leaseTimer = setTimeout(() => this.wake(), inMs);
      this.leaseTimer.unref();
    }
    return found;
  }

  private async fill(): Promise<boolean> {
    if (!(await this.anyWork())) return false;
    let found = false;
    found = (await this.train()) || found;
    while (!this.stopping && this.running.size < this.options.concurrency) {
      const job = await this.claimNext();
      if (!job) break;
      found = true;
      this.running.set(
        job.id,
        this.run(job).finally(() => {
          this.running.delete(job.id);
          this.wake();
        }),
      );
    }
    return found;
  }

  // ---- leasing ---------------------------------------------------------------------------

  private leaseEnd(): Date {
    return new Date(Date.now() + this.options.leaseSeconds * 1000);
  }

  /** The next job, users served in turn (each user's oldest first); null when there is none. */
  private async claimNext(): Promise<VaultItem | null> {
    const { manager } = this.options.dataSource;
    const now = new Date();
    const seen = await manager.find(VaultItem, {
      select: { id: true, ownerId: true, attempts: true, leaseUntil: true },
      where: [
        { state: VaultItemState.PENDING, leaseUntil: IsNull() },
        { state: VaultItemState.PENDING, leaseUntil: LessThan(now) },
      ],
      order: { id: 'ASC' },
      take: 50,
    });
    // One per user first, then the rest: a user with many captures does not hold up the others.
    const firsts = new Map<string, VaultItem>();
    for (const row of seen) if (!firsts.has(row.ownerId)) firsts.set(row.ownerId, row);
    const order = [...firsts.values(), ...seen.filter((r) => firsts.get(r.ownerId) !== r)];
    for (const row of order) {
      if (this.running.has(row.id)) continue;
      const abandoned = row.leaseUntil !== null;
      if (abandoned && row.attempts >= this.options.maxAttempts) {
        await this.giveUp(row, now);
        continue;
      }
      const result = await manager.update(
        VaultItem,
        {
          id: row.id,
          state: VaultItemState.PENDING,
          attempts: row.attempts,
          leaseUntil: abandoned ? LessThan(now) : IsNull(),
        },
        { workerId: this.id, attempts: row.attempts + 1, leaseUntil: this.leaseEnd() },
      );
      if (affectedRows(result) !== 1) continue;
      if (abandoned)
        this.options.logger.warn({ vaultItemId: row.id }, 'vault enrichment taken again after its worker stopped');
      return manager.findOneBy(VaultItem, { id: row.id });
    }
    return null;
  }

  private held(job: VaultItem) {
    return { id: job.id, workerId: this.id, attempts: job.attempts, state: VaultItemState.PENDING };
  }

  private async giveUp(row: VaultItem, now: Date): Promise<void> {
    await this.options.dataSource.transaction(async (m) => {
      const result = await m.update(
        VaultItem,
        { id: row.id, state: VaultItemState.PENDING, attempts: row.attempts, leaseUntil: LessThan(now) },
        { state: VaultItemState.FAILED, error: 'interrupted', leaseUntil: null, workerId: null, updatedAt: now },
      );
      if (affectedRows(result) !== 1) return;
      const item = await m.findOneByOrFail(VaultItem, { id: row.id });
      await this.options.caps.releasePending(m, item.ownerId);
      await publish(m, VaultItemFailed, {
        userId: item.ownerId,
        resourceId: item.id,
        data: itemEventData(item, { error: item.error }),
      });
    });
    vaultEnrichments.inc({ outcome: 'failed' });
  }

  // ---- enrichment ------------------------------------------------------------------------

  private async run(job: VaultItem): Promise<void> {
    const { logger, leaseSeconds } = this.options;
    const renew = setInterval(() => void this.renew(job), (leaseSeconds * 1000) / 3);
    const started = process.hrtime.bigint();
    try {
      let outcome: Outcome;
      try {
        outcome = await this.enrich(job);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (err instanceof FetchError || code === 'parse_timeout' || code === 'parse_failed') {
          outcome = { state: VaultItemState.FAILED, error: String(code) };
        } else throw err;
      }
      const done = await this.finish(job, outcome);
      vaultEnrichments.inc({ outcome: done ? String(outcome.state) : 'lost' });
      vaultEnrichSeconds.observe({ kind: job.kind }, secondsSince(started));
    } catch (err) {
      // Ours (storage, database): the lease runs out and the job is taken again.
      logger.error({ err, vaultItemId: job.id }, 'vault enrichment failed; it is taken again when its lease ends');
    } finally {
      clearInterval(renew);
    }
  }

  private async enrich(job: VaultItem): Promise<Outcome> {
    const { parser, textMaxChars, store, dispatcher } = this.options;
    if (job.kind === VaultItemKind.TEXT) return { state: VaultItemState.READY };
    if (job.kind === VaultItemKind.FILE) {
      const size = job.blobKey ? await store.size(job.blobKey) : null;
      if (size == null) return { state: VaultItemState.FAILED, error: 'file_missing' };
      const bytes = (await store.read(job.blobKey!, 0, size))!;
      const facts = await parser.sniff(bytes, job.mediaType, textMaxChars);
      return {
        state: VaultItemState.READY,
        mediaType: facts.mediaType,
        text: facts.text,
        excerpt: excerptOf(facts.text),
        title: job.title ?? job.fileName,
      };
    }
    const url = parseHttpUrl(job.url ?? '');
    if (!url) return { state: VaultItemState.FAILED, error: 'invalid_url' };
    const page = await fetchPage(url, dispatcher, this.options.fetch);
    const type = page.mediaType ?? (looksLikeHtml(page.body) ? 'text/html' : null);
    if (type && HTML.test(type)) {
      // Over the limit, the first bytes are parsed (they hold the head and the start of the text).
      const facts = await parser.html(page.body, page.charset, page.url, textMaxChars);
      return {
        state: VaultItemState.READY,
        mediaType: type,
        sizeBytes: page.truncated ? page.declaredBytes : page.body.length,
        title: job.title ?? facts.title,
        description: facts.description,
        siteName: facts.siteName,
        language: facts.language,
        text: facts.text,
        excerpt: excerptOf(facts.text ?? facts.description),
      };
    }
    if (type && TEXTUAL.test(type) && !page.truncated) {
      const facts = await parser.sniff(page.body, type, textMaxChars);
      return {
        state: VaultItemState.READY,
        mediaType: type,
        sizeBytes: page.body.length,
        text: facts.text,
        excerpt: excerptOf(facts.text),
      };
    }
    // Another type: its type and size as the server gave them.
    return {
      state: VaultItemState.READY,
      mediaType: type,
      sizeBytes: page.truncated ? page.declaredBytes : page.body.length,
    };
  }

  /** Records the outcome with its classification and events, if the job is still this worker's. */
  private async finish(job: VaultItem, outcome: Outcome): Promise<boolean> {
    const { caps, rules, predictors, dataSource } = this.options;
    const enriched: VaultItem = { ...job, ...outcome };
    const decided = classify(enriched, await rules.rulesOf(job.ownerId), await predictors.predictor(job.ownerId), {
      minConfidence: this.options.minConfidence,
      keywordTags: this.options.keywordTags,
    });
    return retryOnLockConflict(() =>
      inTransaction(dataSource, async (m) => {
        const result = await m.update(VaultItem, this.held(job), {
          ...outcome,
          ...decided,
          searchWords: itemSearchWords(enriched),
          leaseUntil: null,
          workerId: null,
          version: () => 'version + 1',
          updatedAt: new Date(),
        });
        if (affectedRows(result) !== 1) return false;
        const item = await m.findOneByOrFail(VaultItem, { id: job.id });
        // No longer waiting: a slot of the pending cap is free.
        await caps.releasePending(m, item.ownerId);
        await syncTags(m, item);
        await publish(m, item.state === VaultItemState.READY ? VaultItemReady : VaultItemFailed, {
          userId: item.ownerId,
          resourceId: item.id,
          data: itemEventData(item, item.error ? { error: item.error } : {}),
        });
        if (item.category || item.tags.length) await publish(m, VaultItemClassified, classifiedEvent(item));
        return true;
      }),
    );
  }

  private async renew(job: VaultItem): Promise<void> {
    try {
      await this.options.dataSource.manager.update(VaultItem, this.held(job), { leaseUntil: this.leaseEnd() });
    } catch (err) {
      this.options.logger.warn({ err, vaultItemId: job.id }, 'vault enrichment lease not renewed; retrying');
    }
  }

  // ---- training --------------------------------------------------------------------------

  /**
   * Teaches one user's classifier the categories they set by hand since it last learned (and
   * unlearns what they changed). The model's version fences out a concurrent trainer.
   */
  private async train(): Promise<boolean> {
    const { dataSource } = this.options;
    const next = await dataSource.manager.findOne(VaultItem, {
      select: { id: true, ownerId: true },
      where: [
        { trainPending: true, state: VaultItemState.READY },
        { trainPending: true, state: VaultItemState.FAILED },
      ],
    });
    if (!next) return false;
    const ownerId = next.ownerId;
    const items = await dataSource.manager.find(VaultItem, {
      where: [
        { ownerId, trainPending: true, state: VaultItemState.READY },
        { ownerId, trainPending: true, state: VaultItemState.FAILED },
      ],
      take: TRAIN_BATCH,
    });
    const stored = await dataSource.manager.findOneBy(VaultClassifier, { ownerId });
    const model = trainModel(
      stored ? { model: stored.model, labelCounts: JSON.parse(stored.labelCounts) as Record<string, number> } : null,
      items.map((item) => ({
        words: documentWords(item),
        learn: item.classifiedBy === ClassifiedBy.USER ? item.category : null,
        unlearn: item.trainedCategory,
      })),
    );
    await inTransaction(dataSource, async (m) => {
      const now = new Date();
      if (stored) {
        const result = await m.update(
          VaultClassifier,
          { ownerId, version: stored.version },
          {
            model: model.model,
            labelCounts: JSON.stringify(model.labelCounts),
            version: stored.version + 1,
            updatedAt: now,
          },
        );
        if (affectedRows(result) !== 1) throw new Error('another trainer saved this model first');
      } else {
        await m.insert(VaultClassifier, {
          ownerId,
          model: model.model,
          labelCounts: JSON.stringify(model.labelCounts),
          version: 1,
          updatedAt: now,
        });
      }
      for (const item of items) {
        await m.update(
          VaultItem,
          { id: item.id, version: item.version },
          { trainPending: false, trainedCategory: item.classifiedBy === ClassifiedBy.USER ? item.category : null },
        );
      }
    }).catch((err) => this.options.logger.info({ err: String(err), ownerId }, 'vault training deferred'));
    return true;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.leaseTimer);
    await this.poller?.stop();
    await Promise.race([
      Promise.all(this.running.values()),
      new Promise((resolve) => setTimeout(resolve, 5000).unref()),
    ]);
    await this.options.parser.stop();
  }
}

function looksLikeHtml(body: Buffer): boolean {
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(body.subarray(0, 512).toString('latin1'));
}
