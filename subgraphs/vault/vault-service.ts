// The Vault's rules: capture (links, texts, files) with duplicates refused, the caps, reads and
// lists (filters, full-text search), changes at the expected version, rules, and each change's
// event written in the same transaction (lib/outbox.ts). Enrichment and training run in the
// background (enrichment-worker.ts).
import { createHash, webcrypto } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { In, IsNull, Not } from 'typeorm';
import type { BatchContext } from '../../lib/kit/jobs';
import { purgeAt, PurgeParams, TrashEntry, trashPage } from '../../lib/kit/trash';
import type { BlobStore } from '../../lib/blob-store';
import { affectedRows, isUniqueViolation } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import type { ExpensiveGate } from '../../lib/kit/expensive';
import type { ExpensiveReads } from '../../lib/kit/expensive-reads';
import { booleanModeOwnerQuery, fts5OwnerQuery, ownerWords, parseSearchQuery } from '../../lib/kit/owner-search';
import { Cap, UserCaps } from '../../lib/kit/user-caps';
import { lostAtVersion, staleVersion, updateAtVersion } from '../../lib/kit/versioned';
import { databaseTopic, workAdded } from '../../lib/wakeups';
import { decodeSearchCursor, encodeSearchCursor, Page, pageOf, PageOrder } from '../../lib/paging';
import { publish } from '../../lib/kit/typed-events';
import {
  VaultItemCaptured,
  VaultItemClassified,
  VaultItemDeleted,
  VaultItemRestored,
  VaultItemTrashed,
  VaultItemUpdated,
  VaultRuleCreated,
  VaultRuleDeleted,
  VaultRuleUpdated,
} from './events';
import { classify, Predictor, StoredModel } from './classifier';
import {
  ClassifiedBy,
  TagSource,
  VaultItem,
  VaultItemKind,
  VaultItemState,
  VaultTag,
  vaultBlobKey,
} from './entities/vault-item';
import { VaultClassifier } from './entities/vault-classifier';
import { VaultItemTag } from './entities/vault-item-tag';
import { VaultRule, VaultRuleThen, VaultRuleWhen } from './entities/vault-rule';
import { parseHttpUrl, URL_PATTERN, urlKey } from './url-key';
import { globProblem } from './url-glob';

export interface VaultLimits {
  maxFileBytes: number;
  textMaxChars: number;
  itemsPerUser: number;
  fileBytesPerUser: number;
  pendingPerUser: number;
  rulesPerUser: number;
  minConfidence: number;
  keywordTags: number;
  /** Words and phrases of one `q` (SEARCH_MAX_TERMS). */
  searchMaxTerms: number;
  /** SQLite: matches ranked at most (SEARCH_CANDIDATES). */
  searchCandidates: number;
  /** The process's per-user gate on expensive operations (EXPENSIVE_PER_USER). */
  expensive: ExpensiveGate;
  /** Where the search's ranking statement runs (off the event loop on SQLite). */
  reads: ExpensiveReads;
  /** TRASH_RETENTION_DAYS (default 30). */
  trashRetentionDays?: number;
}

export interface CaptureInput {
  url?: string | null;
  text?: string | null;
  title?: string | null;
  file?: { name: string; mediaType?: string | null; contentBase64: string } | null;
  tags?: string[] | null;
  category?: string | null;
  favorite?: boolean | null;
}

export interface ItemChanges {
  title?: string | null;
  category?: string | null;
  tags?: string[] | null;
  favorite?: boolean | null;
  archived?: boolean | null;
}

export interface ItemFilters {
  kind?: VaultItemKind | null;
  category?: string | null;
  tag?: string | null;
  state?: VaultItemState | null;
  unclassified?: boolean | null;
  favorite?: boolean | null;
  archived?: 'false' | 'true' | 'all' | null;
  q?: string | null;
}

export interface RuleInput {
  name?: string;
  priority?: number;
  when?: VaultRuleWhen;
  then?: VaultRuleThen;
}

/** Newest first: ids are UUIDv7, in creation order. */
const ORDER: PageOrder<VaultItem> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'DESC' };
/** Every column but the text: pages carry the excerpt only. */
const LISTED = [
  'id',
  'ownerId',
  'kind',
  'url',
  'title',
  'excerpt',
  'description',
  'language',
  'siteName',
  'mediaType',
  'sizeBytes',
  'sha256',
  'fileName',
  'state',
  'error',
  'category',
  'tags',
  'classifiedBy',
  'classifiedRuleId',
  'classifiedConfidence',
  'favorite',
  'archived',
  'version',
  'capturedAt',
  'updatedAt',
] as const;
/** The search index's words of an item (lib/kit/owner-search.ts): its title, text and url, behind its owner's tag. */
/** The wake-up topic of the enrichment workers of one vault database (lib/wakeups.ts). */
export function vaultTopic(dataSource: DataSource): string {
  return databaseTopic('vault', dataSource);
}

/** The transaction under way adds work for the enrichment workers: each process's is told once it commits. */
export function vaultWorkAdded(m: EntityManager): void {
  workAdded(m.connection, vaultTopic(m.connection));
}

export const itemSearchWords = (item: Pick<VaultItem, 'ownerId' | 'title' | 'text' | 'url'>): string =>
  ownerWords(item.ownerId, item.title, item.text, item.url);
/** Characters of a search's `q`. */
const MAX_QUERY_LENGTH = 500;
/** How deep a search may page (offset cursor): past it, narrow the query. */
const MAX_SEARCH_OFFSET = 10_000;

const TAG = /^[^\s,]{1,50}$/u;
/** Lengths as JSON Schema counts them (code points), so the document and the service agree. */
const chars = (s: string) => [...s].length;
const URL_SHAPE = new RegExp(URL_PATTERN, 'u');
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export const excerptOf = (text: string | null | undefined): string | null => {
  const t = text?.replace(/\s+/g, ' ').trim();
  return t ? [...t].slice(0, 300).join('') : null;
};

/** What vault.item.* events carry: ids, the title, the kind and state; never texts. */
export const itemEventData = <E extends object = object>(item: VaultItem, extra: E = {} as E) => ({
  vault_item_id: item.id,
  kind: item.kind,
  title: item.title,
  state: item.state,
  ...extra,
});

/** The vault's caps (lib/kit/user-caps.ts): counted in user_caps, taken in the write's transaction. */
export function vaultCaps(limits: VaultLimits) {
  return {
    items: {
      limit: 'VAULT_ITEMS_PER_USER',
      max: limits.itemsPerUser,
      what: `A vault holds at most ${limits.itemsPerUser} items.`,
    },
    fileBytes: {
      limit: 'VAULT_FILE_BYTES_PER_USER',
      max: limits.fileBytesPerUser,
      what: `A vault holds at most ${limits.fileBytesPerUser} bytes of files.`,
    },
    // What waits for enrichment is a rate, not storage: 429 with Retry-After, as syntheses.
    pending: {
      limit: 'VAULT_PENDING_PER_USER',
      max: limits.pendingPerUser,
      retryAfterSeconds: 5,
      what: `At most ${limits.pendingPerUser} items wait for enrichment at once; try again when some are done.`,
    },
    rules: { limit: 'VAULT_RULES_PER_USER', max: limits.rulesPerUser, what: `At most ${limits.rulesPerUser} rules.` },
  } satisfies Record<string, Cap>;
}

export function normaliseTags(tags: string[], field = 'tags'): string[] {
  const out = new Set<string>();
  for (const raw of tags) {
    const tag = raw.trim().toLowerCase();
    if (!TAG.test(tag))
      throw validationError({ [field]: [`"${raw}" must be 1 to 50 characters without spaces or commas`] });
    out.add(tag);
  }
  if (out.size > 50) throw validationError({ [field]: ['at most 50 tags'] });
  return [...out];
}

function checkCategory(category: string | null | undefined): string | null | undefined {
  if (category == null) return category;
  const c = category.trim();
  if (!c || chars(c) > 100) throw validationError({ category: ['must be 1 to 100 characters'] });
  return c;
}

/** Writes an item's tag rows to match its `tags` (for the tag filter and counts). */
export async function syncTags(m: EntityManager, item: Pick<VaultItem, 'id' | 'ownerId' | 'tags'>): Promise<void> {
  await m.delete(VaultItemTag, { itemId: item.id });
  if (item.tags.length)
    await m.insert(
      VaultItemTag,
      item.tags.map((t) => ({ itemId: item.id, name: t.name, ownerId: item.ownerId })),
    );
}

export class VaultService {
  private readonly predictors = new Map<string, { version: number; predictor: Predictor }>();
  readonly caps: UserCaps;
  readonly cap: ReturnType<typeof vaultCaps>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly store: BlobStore,
    private readonly limits: VaultLimits,
  ) {
    this.caps = new UserCaps(dataSource);
    this.cap = vaultCaps(limits);
  }

  private get mysql() {
    return this.dataSource.options.type === 'mysql';
  }

  // ---- capture ---------------------------------------------------------------------------

  /** Checks a capture and prepares its row (files: decoded, hashed, stored). */
  private async prepare(ownerId: string, input: CaptureInput): Promise<{ item: VaultItem; bytes?: Buffer }> {
    const given = [input.file ? 'file' : null, input.text != null ? 'text' : null].filter(Boolean);
    if (given.length > 1) throw validationError({ body: ['give one of url, text or file'] });
    if (!given.length && input.url == null) throw validationError({ body: ['give one of url, text or file'] });
    if (input.file && input.url != null) throw validationError({ url: ['a file takes no url'] });
    const now = new Date();
    const item = this.dataSource.manager.create(VaultItem, {
      id: uuidv7(),
      ownerId,
      url: null,
      urlKey: null,
      title: null,
      text: null,
      excerpt: null,
      description: null,
      language: null,
      siteName: null,
      mediaType: null,
      sizeBytes: null,
      sha256: null,
      fileName: null,
      blobKey: null,
      state: VaultItemState.PENDING,
      error: null,
      category: null,
      tags: [],
      classifiedBy: null,
      classifiedRuleId: null,
      classifiedConfidence: null,
      favorite: input.favorite ?? false,
      archived: false,
      version: 1,
      capturedAt: now,
      updatedAt: now,
      attempts: 0,
      workerId: null,
      leaseUntil: null,
      trainPending: false,
      trainedCategory: null,
      sourceHubId: null,
      sourceNodeId: null,
    });
    if (input.title != null) {
      const title = input.title.trim();
      if (chars(title) > 500) throw validationError({ title: ['at most 500 characters'] });
      item.title = title || null;
    }
    if (input.url != null) {
      if (chars(input.url) > 2048 || !URL_SHAPE.test(input.url))
        throw validationError({ url: ['must be an http or https URL of at most 2048 characters'] });
      const url = parseHttpUrl(input.url);
      // One that does not parse is kept as given (enrichment fails it with `invalid_url`).
      item.url = url ? url.href.slice(0, 2048) : input.url;
      item.urlKey = url ? urlKey(url) : createHash('sha256').update(input.url).digest('hex');
    }
    const category = checkCategory(input.category);
    if (category) {
      item.category = category;
      item.classifiedBy = ClassifiedBy.USER;
      item.trainPending = true;
    }
    if (input.tags) item.tags = normaliseTags(input.tags).map((name) => ({ name, source: TagSource.USER }));
    let bytes: Buffer | undefined;
    if (input.file) {
      item.kind = VaultItemKind.FILE;
      const name = input.file.name?.trim() ?? '';
      if (!name || chars(name) > 255) throw validationError({ 'file.name': ['must be 1 to 255 characters'] });
      const claimed = input.file.mediaType?.trim().toLowerCase() || null;
      if (claimed && (claimed.length > 255 || !/^[\w.+-]+\/[\w.+-]+$/.test(claimed)))
        throw validationError({ 'file.media_type': ['must be a media type such as application/pdf'] });
      const base64 = input.file.contentBase64 ?? '';
      // 4 characters hold 3 bytes: the decoded size is known before decoding.
      if (base64.length % 4 !== 0 || !BASE64.test(base64))
        throw validationError({ 'file.content_base64': ['must be base64 (RFC 4648, with padding)'] });
      const size = (base64.length / 4) * 3 - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
      if (size > this.limits.maxFileBytes)
        throw new AppError('payload_too_large', `A file holds at most ${this.limits.maxFileBytes} bytes.`, {
          limit: 'VAULT_MAX_FILE_BYTES',
          max: this.limits.maxFileBytes,
        });
      if (size === 0) throw validationError({ 'file.content_base64': ['the file is empty'] });
      bytes = Buffer.from(base64, 'base64');
      item.fileName = name;
      item.mediaType = claimed;
      item.sizeBytes = bytes.length;
      // Hashed off the event loop (WebCrypto runs digests in the thread pool).
      item.sha256 = Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('hex');
      item.blobKey = vaultBlobKey(item.id);
    } else if (input.text != null) {
      item.kind = VaultItemKind.TEXT;
      if (input.text.length > this.limits.textMaxChars)
        throw validationError({ text: [`at most ${this.limits.textMaxChars} characters`] });
      const text = input.text.trim();
      if (!text) throw validationError({ text: ['must not be empty'] });
      item.text = text;
      item.excerpt = excerptOf(text);
      item.title ??= [...(text.split('\n', 1)[0] ?? '')].slice(0, 200).join('').trim() || null;
    } else {
      item.kind = VaultItemKind.LINK;
      item.title ??= null;
    }
    return { item, bytes };
  }

  private async duplicateOf(m: EntityManager, item: VaultItem): Promise<string | null> {
    // The URL is unique per owner whatever the kind (the index is on owner and url key): a text
    // whose url is already in the vault is a duplicate as a link is.
    const where = item.urlKey
      ? { ownerId: item.ownerId, urlKey: item.urlKey }
      : item.sha256
        ? { ownerId: item.ownerId, sha256: item.sha256 }
        : null;
    if (!where) return null;
    const existing = await m.findOne(VaultItem, { select: { id: true, deletedAt: true }, where });
    if (existing?.deletedAt) this.trashedDuplicates.add(existing.id);
    return existing?.id ?? null;
  }

  /** Told after a commit that put an item in the trash (the retention purge's timer). */
  onTrashed?: (deletedAt: Date) => void;

  /** Duplicates found in the trash (until purged they keep their URL and content: restore or purge them). */
  private readonly trashedDuplicates = new Set<string>();

  private duplicate(id: string): AppError {
    if (this.trashedDuplicates.delete(id))
      return new AppError('conflict', 'That is in your trash: restore it, or purge it first.', {
        existingId: id,
        inTrash: true,
      });
    return new AppError('conflict', 'That is already in your vault.', { existingId: id });
  }

  /** Counts a new item against the caps (the pending one is a rate: 429), in its transaction. */
  private async takeCaps(m: EntityManager, item: VaultItem): Promise<void> {
    await this.caps.take(
      m,
      item.ownerId,
      { cap: this.cap.items },
      { cap: this.cap.pending },
      { cap: this.cap.fileBytes, n: item.kind === VaultItemKind.FILE ? (item.sizeBytes ?? 0) : 0 },
    );
  }

  /** Counts out a deleted item: it was `state` when it went. */
  private async releaseCaps(m: EntityManager, item: VaultItem): Promise<void> {
    const { items, fileBytes, pending } = this.cap;
    await this.caps.release(
      m,
      item.ownerId,
      fileBytes.limit,
      item.kind === VaultItemKind.FILE ? (item.sizeBytes ?? 0) : 0,
    );
    await this.caps.release(m, item.ownerId, items.limit);
    if (item.state === VaultItemState.PENDING) await this.caps.release(m, item.ownerId, pending.limit);
  }

  async capture(ownerId: string, input: CaptureInput): Promise<VaultItem> {
    const { item, bytes } = await this.prepare(ownerId, input);
    const manager = this.dataSource.manager;
    const existing = await this.duplicateOf(manager, item);
    if (existing) throw this.duplicate(existing);
    const { items, pending, fileBytes } = this.cap;
    await this.caps.prepare(ownerId, [items.limit, pending.limit, fileBytes.limit]);
    // The bytes first: a row never points at a file that is not there (a failed insert removes them).
    if (bytes) await this.store.put(item.blobKey!, bytes);
    try {
      return await inTransaction(this.dataSource, async (m) => {
        await this.takeCaps(m, item);
        return this.insert(m, item);
      });
    } catch (err) {
      if (bytes) await this.store.delete(item.blobKey!).catch(() => undefined);
      if (isUniqueViolation(err)) {
        const raced = await this.duplicateOf(manager, item);
        if (raced) throw this.duplicate(raced);
      }
      throw err;
    }
  }

  private async insert(
    m: EntityManager,
    item: VaultItem,
    source?: { hubId: string; nodeId: string },
  ): Promise<VaultItem> {
    await m.insert(VaultItem, { ...item, searchWords: itemSearchWords(item) });
    vaultWorkAdded(m); // pending: to enrich
    await syncTags(m, item);
    await publish(m, VaultItemCaptured, {
      userId: item.ownerId,
      resourceId: item.id,
      data: itemEventData(item, source ? { source: { hub_id: source.hubId, node_id: source.nodeId } } : {}),
    });
    return item;
  }

  /**
   * The hubs quick-add saga: captures a text or URL for a hub node, inside the event consumer's
   * transaction. Once per node however often the request is delivered (the node is a unique key).
   */
  async captureForNode(
    m: EntityManager,
    ownerId: string,
    source: { hubId: string; nodeId: string },
    input: { text?: string | null; url?: string | null },
  ): Promise<VaultItem | null> {
    if (await m.existsBy(VaultItem, { sourceNodeId: source.nodeId })) return null;
    const { item } = await this.prepare(ownerId, input.text != null ? { text: input.text } : { url: input.url });
    item.sourceHubId = source.hubId;
    item.sourceNodeId = source.nodeId;
    const existing = await this.duplicateOf(m, item);
    if (existing) {
      // Already captured: the node is pointed at the item the user has.
      const found = await m.findOneByOrFail(VaultItem, { id: existing });
      await publish(m, VaultItemCaptured, {
        userId: ownerId,
        resourceId: found.id,
        data: itemEventData(found, { source: { hub_id: source.hubId, node_id: source.nodeId }, duplicate: true }),
      });
      return found;
    }
    // Quick-add waits for enrichment as any capture does: the pending cap applies too (a refusal
    // becomes vault.capture.refused, reason rate_limit_exceeded).
    await this.takeCaps(m, item);
    return this.insert(m, item, source);
  }

  // ---- reads -----------------------------------------------------------------------------

  /** Another user's item is `not_found`, exactly like an unknown id. */
  async get(ownerId: string, id: string): Promise<VaultItem> {
    const item = await this.dataSource.manager.findOneBy(VaultItem, { id, ownerId, deletedAt: IsNull() });
    if (!item) throw new AppError('not_found', 'No such vault item.');
    return item;
  }

  private filtered(ownerId: string, f: ItemFilters): SelectQueryBuilder<VaultItem> {
    const query = this.dataSource.manager
      .createQueryBuilder(VaultItem, 'item')
      .select(LISTED.map((p) => `item.${p}`))
      .where('item.ownerId = :ownerId AND item.deletedAt IS NULL', { ownerId });
    if (f.kind) query.andWhere('item.kind = :kind', { kind: f.kind });
    if (f.category) query.andWhere('item.category = :category', { category: f.category });
    if (f.state) query.andWhere('item.state = :state', { state: f.state });
    if (f.unclassified) query.andWhere('item.category IS NULL');
    if (f.favorite != null) query.andWhere('item.favorite = :favorite', { favorite: f.favorite ? 1 : 0 });
    const archived = f.archived ?? 'false';
    if (archived !== 'all') query.andWhere('item.archived = :archived', { archived: archived === 'true' ? 1 : 0 });
    if (f.tag) {
      query.andWhere(
        'EXISTS (SELECT 1 FROM vault_item_tags t WHERE t.item_id = item.id AND t.owner_id = :ownerId AND t.name = :tag)',
        { tag: f.tag.trim().toLowerCase() },
      );
    }
    return query;
  }

  async list(ownerId: string, filters: ItemFilters, limit: number, cursor?: string | null): Promise<Page<VaultItem>> {
    if (filters.q != null && filters.q.trim()) return this.search(ownerId, filters, limit, cursor);
    return pageOf(this.filtered(ownerId, filters), ORDER, limit, cursor);
  }

  /** Full text with the database's own index, best match first; the cursor is an offset bound to the query. */
  private async search(
    ownerId: string,
    filters: ItemFilters,
    limit: number,
    cursor?: string | null,
  ): Promise<Page<VaultItem>> {
    // The cursor is bound to what the results depend on: this owner, this text, these filters.
    const bound = [
      ownerId,
      filters.q,
      filters.kind,
      filters.category,
      filters.tag,
      filters.state,
      filters.unclassified,
      filters.favorite,
      filters.archived,
    ];
    const offset = cursor ? decodeSearchCursor(cursor, bound) : 0;
    if (offset > MAX_SEARCH_OFFSET)
      throw validationError({ cursor: [`a search pages at most ${MAX_SEARCH_OFFSET} results deep; narrow the query`] });
    // Words as whole words (not prefixes), "quoted" text as a phrase; all within the owner's words.
    const terms = parseSearchQuery(filters.q!.normalize('NFC'), {
      maxLength: MAX_QUERY_LENGTH,
      maxTerms: this.limits.searchMaxTerms,
    }).map((t) => ({ ...t, phrase: true }));
    if (!terms.length) return { items: [], nextCursor: null };
    // The ids of a page, best match first: the kit's expensive read (off the event loop on SQLite,
    // within its share of MySQL's pool); then their rows, by id.
    const query = this.filtered(ownerId, filters).select('item.id', 'id');
    if (this.mysql) {
      // Every term required, within the owner's tag: InnoDB reads and ranks this user's postings only.
      const against = booleanModeOwnerQuery(ownerId, terms);
      query
        .andWhere('MATCH(item.searchWords) AGAINST (:against IN BOOLEAN MODE)', { against })
        .addSelect('MATCH(item.searchWords) AGAINST (:against IN BOOLEAN MODE)', 'score')
        .orderBy('score', 'DESC')
        .addOrderBy('item.id', 'DESC');
    } else {
      // The newest SEARCH_CANDIDATES matches (FTS5 walks them by rowid and stops), those ranked,
      // then their items through the search_rowid index.
      const match = fts5OwnerQuery(ownerId, terms);
      query
        .innerJoin(
          `(SELECT rowid AS fts_rowid, rank AS fts_rank FROM vault_items_fts
            WHERE vault_items_fts MATCH :match AND rowid >= (SELECT MIN(r) FROM (
              SELECT rowid AS r FROM vault_items_fts WHERE vault_items_fts MATCH :match ORDER BY rowid DESC LIMIT :candidates)))`,
          'fts',
          'fts.fts_rowid = item.search_rowid',
          { match, candidates: this.limits.searchCandidates },
        )
        .orderBy('fts.fts_rank', 'ASC')
        .addOrderBy('item.id', 'DESC');
    }
    const [sql, params] = query
      .offset(offset)
      .limit(limit + 1)
      .getQueryAndParameters();
    const ids = (
      await this.limits.expensive.run(ownerId, 'search', () =>
        this.limits.reads.select<{ id: string }>(this.dataSource, sql, params),
      )
    ).map((r) => r.id);
    const page = ids.slice(0, limit);
    // By id alone (the owner is checked on each row): with the owner in the WHERE, SQLite's planner
    // took the owner's index and read every item of the user.
    const found = page.length
      ? await this.dataSource.manager
          .createQueryBuilder(VaultItem, 'item')
          .select(LISTED.map((p) => `item.${p}`))
          .where('item.id IN (:...page) AND item.deletedAt IS NULL', { page })
          .getMany()
      : [];
    const byId = new Map(found.filter((item) => item.ownerId === ownerId).map((item) => [item.id, item]));
    return {
      items: page.map((id) => byId.get(id)).filter((item): item is VaultItem => item !== undefined),
      nextCursor: ids.length > limit ? encodeSearchCursor(bound, offset + limit) : null,
    };
  }

  async counts(ownerId: string, what: 'category' | 'tag'): Promise<{ name: string; count: number }[]> {
    const rows: { name: string; count: string | number }[] =
      what === 'category'
        ? await this.dataSource.manager
            .createQueryBuilder(VaultItem, 'i')
            .select('i.category', 'name')
            .addSelect('COUNT(*)', 'count')
            .where('i.ownerId = :ownerId AND i.category IS NOT NULL AND i.deletedAt IS NULL', { ownerId })
            .groupBy('i.category')
            .orderBy('name', 'ASC')
            .getRawMany()
        : await this.dataSource.manager
            .createQueryBuilder(VaultItemTag, 't')
            .select('t.name', 'name')
            .addSelect('COUNT(*)', 'count')
            .where('t.ownerId = :ownerId', { ownerId })
            .groupBy('t.name')
            .orderBy('name', 'ASC')
            .getRawMany();
    return rows.map((r) => ({ name: r.name, count: Number(r.count) }));
  }

  /** A file item's stored bytes: their size and the sniffed type. */
  async content(ownerId: string, id: string) {
    const item = await this.get(ownerId, id);
    if (!item.blobKey) throw new AppError('not_found', 'This item has no file.');
    const bytes = await this.store.size(item.blobKey);
    if (bytes == null) throw new AppError('not_found', 'This item has no file.');
    return {
      item,
      bytes,
      etag: `"${item.sha256}"`,
      // Until enrichment sniffs it, nothing the user claimed is served as its type.
      contentType: item.state === VaultItemState.READY && item.mediaType ? item.mediaType : 'application/octet-stream',
      fileName: item.fileName ?? `${item.id}.bin`,
    };
  }

  async chunk(ownerId: string, id: string, offset: number, length: number): Promise<Buffer> {
    const item = await this.get(ownerId, id);
    if (!item.blobKey) throw new AppError('not_found', 'This item has no file.');
    return (await this.store.read(item.blobKey, offset, length)) ?? Buffer.alloc(0);
  }

  // ---- changes ---------------------------------------------------------------------------

  async update(ownerId: string, id: string, version: number, changes: ItemChanges): Promise<VaultItem> {
    const updated = await inTransaction(this.dataSource, async (m) => {
      const item = await m.findOneBy(VaultItem, { id, ownerId, deletedAt: IsNull() });
      if (!item || item.version !== version) return null;
      const set: Partial<VaultItem> = {};
      const changed: string[] = [];
      if (changes.title !== undefined) {
        const title = changes.title?.trim() || null;
        if (title && chars(title) > 500) throw validationError({ title: ['at most 500 characters'] });
        if (title !== item.title) {
          set.title = title;
          set.searchWords = itemSearchWords({ ...item, title });
          changed.push('title');
        }
      }
      if (changes.category !== undefined) {
        const category = checkCategory(changes.category) ?? null;
        // Set by hand (or cleared by hand): the classifier learns (or unlearns) it.
        set.category = category;
        set.classifiedBy = category ? ClassifiedBy.USER : null;
        set.classifiedRuleId = null;
        set.classifiedConfidence = null;
        set.trainPending = true;
        vaultWorkAdded(m); // to learn
        changed.push('category');
      }
      if (changes.tags !== undefined) {
        const names = changes.tags ? normaliseTags(changes.tags) : [];
        const before = new Map(item.tags.map((t) => [t.name, t.source]));
        set.tags = names.map((name) => ({ name, source: before.get(name) ?? TagSource.USER }));
        changed.push('tags');
      }
      if (changes.favorite != null && changes.favorite !== item.favorite) {
        set.favorite = changes.favorite;
        changed.push('favorite');
      }
      if (changes.archived != null && changes.archived !== item.archived) {
        set.archived = changes.archived;
        changed.push('archived');
      }
      if (!(await updateAtVersion(m, VaultItem, { id, ownerId }, version, { ...set, updatedAt: new Date() })))
        return null;
      const saved = await m.findOneByOrFail(VaultItem, { id, ownerId });
      if (set.tags) await syncTags(m, saved);
      await publish(m, VaultItemUpdated, {
        userId: ownerId,
        resourceId: id,
        data: itemEventData(saved, { version: saved.version, changed }),
      });
      return saved;
    });
    return updated ?? lostAtVersion('vault item', version, () => this.get(ownerId, id));
  }

  /**
   * To the trash (a new version, `vault.item.trashed`): gone from lists, search, counts and hub
   * nodes, still counted by the caps (its file too) until purged; `permanent`: deleted at once.
   */
  async delete(ownerId: string, id: string, version: number, permanent = false): Promise<VaultItem> {
    if (!permanent) return this.trash(ownerId, id, version);
    const item = await this.get(ownerId, id);
    const won =
      item.version === version &&
      (await inTransaction(this.dataSource, async (m) => {
        // At the state read, so the pending count is released exactly once (a worker's give-up
        // changes the state without a new version).
        if (affectedRows(await m.delete(VaultItem, { id, ownerId, version, state: item.state })) !== 1) return false;
        await this.releaseCaps(m, item);
        await m.delete(VaultItemTag, { itemId: id });
        await publish(m, VaultItemDeleted, {
          userId: ownerId,
          resourceId: id,
          data: itemEventData(item),
        });
        return true;
      }));
    if (!won) return lostAtVersion('vault item', version, () => this.get(ownerId, id));
    if (item.blobKey) await this.store.delete(item.blobKey);
    return item;
  }

  private get retentionDays(): number {
    return this.limits.trashRetentionDays ?? 30;
  }

  private async trash(ownerId: string, id: string, version: number): Promise<VaultItem> {
    const item = await this.get(ownerId, id);
    const deletedAt = new Date();
    const trashed = { ...item, deletedAt, version: version + 1 };
    const won =
      item.version === version &&
      (await inTransaction(this.dataSource, async (m) => {
        const result = await m.update(
          VaultItem,
          { id, ownerId, version, deletedAt: IsNull() },
          { deletedAt, version: version + 1 },
        );
        if (affectedRows(result) !== 1) return false;
        // Its tags leave the counts (the item keeps them in `tags` for a restore).
        await m.delete(VaultItemTag, { itemId: id });
        await publish(m, VaultItemTrashed, {
          userId: ownerId,
          resourceId: id,
          data: itemEventData(trashed, {
            version: trashed.version,
            purge_at: purgeAt(deletedAt, this.retentionDays).toISOString(),
          }),
        });
        return true;
      }));
    if (!won) return lostAtVersion('vault item', version, () => this.get(ownerId, id));
    this.onTrashed?.(deletedAt);
    return trashed;
  }

  private async trashedItem(m: EntityManager, ownerId: string, id: string): Promise<VaultItem> {
    const item = await m.findOneBy(VaultItem, { id, ownerId, deletedAt: Not(IsNull()) });
    if (!item) throw new AppError('not_found', 'No such vault item in the trash.');
    return item;
  }

  /** Brings a trashed item back as it was (a new version, `vault.item.restored`): tags, file, hub nodes. */
  async restore(ownerId: string, id: string): Promise<VaultItem> {
    return inTransaction(this.dataSource, async (m) => {
      const item = await this.trashedItem(m, ownerId, id);
      const restored = { ...item, deletedAt: null, version: item.version + 1, updatedAt: new Date() };
      const result = await m.update(
        VaultItem,
        { id, ownerId, version: item.version, deletedAt: Not(IsNull()) },
        { deletedAt: null, version: restored.version, updatedAt: restored.updatedAt },
      );
      if (affectedRows(result) !== 1) throw new AppError('not_found', 'No such vault item in the trash.');
      await syncTags(m, restored);
      await publish(m, VaultItemRestored, {
        userId: ownerId,
        resourceId: id,
        data: itemEventData(restored, { version: restored.version }),
      });
      return restored;
    });
  }

  /** Deletes a trashed item and its file for good (`vault.item.deleted`), in `m`: its caps freed. False: gone meanwhile. */
  private async purgeRow(m: EntityManager, item: VaultItem): Promise<boolean> {
    const { id, ownerId } = item;
    // At the state read, so the pending count is released exactly once.
    if (affectedRows(await m.delete(VaultItem, { id, ownerId, state: item.state, deletedAt: Not(IsNull()) })) !== 1)
      return false;
    await this.releaseCaps(m, item);
    await m.delete(VaultItemTag, { itemId: id });
    await publish(m, VaultItemDeleted, {
      userId: ownerId,
      resourceId: id,
      data: itemEventData(item, { reason: 'purged' }),
    });
    return true;
  }

  async purge(ownerId: string, id: string): Promise<VaultItem> {
    const item = await this.trashedItem(this.dataSource.manager, ownerId, id);
    if (!(await inTransaction(this.dataSource, (m) => this.purgeRow(m, item))))
      throw new AppError('not_found', 'No such vault item in the trash.');
    if (item.blobKey) await this.store.delete(item.blobKey);
    return item;
  }

  /** The owner's part of the trash (lib/kit/trash.ts: one order and cursor for every part). */
  trashed(ownerId: string, limit: number, cursor?: string | null): Promise<Page<TrashEntry>> {
    const query = this.dataSource.manager
      .createQueryBuilder(VaultItem, 'item')
      .select(['item.id', 'item.title', 'item.url', 'item.fileName', 'item.deletedAt'])
      .where('item.ownerId = :ownerId AND item.deletedAt IS NOT NULL', { ownerId });
    return trashPage(
      query,
      limit,
      cursor,
      (i) => ({ type: 'vault_item', title: i.title ?? i.fileName ?? i.url ?? '' }),
      this.retentionDays,
    );
  }

  /** One batch of a purge job: the owner's items trashed at or before `before`; true while more are left. */
  readonly purgeBatch = async (ctx: BatchContext<PurgeParams>): Promise<boolean> => {
    const ownerId = ctx.job.ownerId;
    const due = await this.dataSource.manager
      .createQueryBuilder(VaultItem, 'item')
      .where('item.ownerId = :ownerId AND item.deletedAt IS NOT NULL AND item.deletedAt <= :before', {
        ownerId,
        before: new Date(ctx.job.params.before),
      })
      .orderBy('item.deletedAt', 'ASC')
      .take(ctx.limit)
      .getMany();
    if (!due.length) return false;
    const gone = await ctx.transaction(async (m) => {
      const purged: VaultItem[] = [];
      for (const item of due) if (await this.purgeRow(m, item)) purged.push(item);
      return purged;
    });
    // The files after the commit (a file left by a crash here is an orphan, never a dangling row).
    for (const item of gone) if (item.blobKey) await this.store.delete(item.blobKey).catch(() => undefined);
    return due.length === ctx.limit;
  };

  /** A link is enriched again: back to pending (the pending cap applies). */
  async refetch(ownerId: string, id: string): Promise<VaultItem> {
    const item = await this.get(ownerId, id);
    if (item.kind !== VaultItemKind.LINK)
      throw new AppError('conflict', 'Only links are fetched.', { kind: item.kind });
    if (item.state === VaultItemState.PENDING) return item;
    await this.caps.prepare(ownerId, [this.cap.pending.limit]);
    return inTransaction(this.dataSource, async (m) => {
      await this.caps.take(m, ownerId, { cap: this.cap.pending });
      vaultWorkAdded(m); // pending again: to fetch
      const result = await m.update(
        VaultItem,
        { id, ownerId, state: item.state },
        {
          state: VaultItemState.PENDING,
          error: null,
          attempts: 0,
          workerId: null,
          leaseUntil: null,
          version: () => 'version + 1',
          updatedAt: new Date(),
        },
      );
      if (affectedRows(result) !== 1) {
        await this.caps.release(m, ownerId, this.cap.pending.limit); // changed meanwhile: not made pending here
        return this.get(ownerId, id);
      }
      const saved = await m.findOneByOrFail(VaultItem, { id });
      await publish(m, VaultItemUpdated, {
        userId: ownerId,
        resourceId: id,
        data: itemEventData(saved, { version: saved.version, changed: ['state', 'error'] }),
      });
      return saved;
    });
  }

  /** Classifies an item again now (rules, the learned model, keywords). */
  async reclassify(ownerId: string, id: string): Promise<VaultItem> {
    const item = await this.get(ownerId, id);
    const decided = classify(item, await this.rulesOf(ownerId), await this.predictor(ownerId), this.limits);
    return inTransaction(this.dataSource, async (m) => {
      const result = await m.update(
        VaultItem,
        { id, ownerId, version: item.version },
        { ...decided, version: item.version + 1, updatedAt: new Date() },
      );
      if (affectedRows(result) !== 1)
        await lostAtVersion('vault item', item.version, () => m.findOneBy(VaultItem, { id, ownerId }));
      const saved = await m.findOneByOrFail(VaultItem, { id });
      await syncTags(m, saved);
      await publish(m, VaultItemClassified, classifiedEvent(saved));
      return saved;
    });
  }

  // ---- classification helpers (also used by the worker) ----------------------------------

  rulesOf(ownerId: string, m: EntityManager = this.dataSource.manager): Promise<VaultRule[]> {
    return m.find(VaultRule, { where: { ownerId }, order: { priority: 'ASC', id: 'ASC' } });
  }

  /** The user's model ready to predict, or null; cached per process while its stored version holds. */
  async predictor(ownerId: string): Promise<Predictor | null> {
    const { manager } = this.dataSource;
    const head = await manager.findOne(VaultClassifier, {
      select: { ownerId: true, version: true },
      where: { ownerId },
    });
    if (!head) return null;
    const cached = this.predictors.get(ownerId);
    if (cached?.version === head.version) return cached.predictor;
    const row = await manager.findOneBy(VaultClassifier, { ownerId });
    if (!row) return null;
    const stored: StoredModel = {
      model: row.model,
      labelCounts: JSON.parse(row.labelCounts) as Record<string, number>,
    };
    const predictor = new Predictor(stored, 5);
    if (this.predictors.size >= 100) this.predictors.delete(this.predictors.keys().next().value!);
    this.predictors.set(ownerId, { version: row.version, predictor });
    return predictor;
  }

  // ---- rules -----------------------------------------------------------------------------

  private checkRule(input: RuleInput, partial: boolean): void {
    const problems: Record<string, string[]> = {};
    if (input.name !== undefined && !(chars(input.name.trim()) >= 1 && chars(input.name.trim()) <= 100))
      problems.name = ['must be 1 to 100 characters'];
    if (input.priority !== undefined && !(Number.isInteger(input.priority) && Math.abs(input.priority) <= 1_000_000))
      problems.priority = ['must be an integer from -1000000 to 1000000'];
    const w = input.when;
    if (w) {
      if (w.urlHost != null && !/^[a-z0-9.-]{1,253}$/i.test(w.urlHost))
        problems['when.url_host'] = ['must be a host name'];
      if (w.urlMatches != null && !(chars(w.urlMatches) >= 1 && chars(w.urlMatches) <= 500))
        problems['when.url_matches'] = ['must be a glob of 1 to 500 characters'];
      else if (w.urlMatches != null) {
        const problem = globProblem(w.urlMatches);
        if (problem) problems['when.url_matches'] = [problem];
      }
      if (
        w.textContains != null &&
        (w.textContains.length > 20 || w.textContains.some((t) => !t.trim() || chars(t) > 200))
      )
        problems['when.text_contains'] = ['at most 20 strings of 1 to 200 characters'];
      if (w.mediaType != null && !/^[\w.+-]+\/([\w.+-]+|\*)$/.test(w.mediaType))
        problems['when.media_type'] = ['must be a media type or a family such as image/*'];
    } else if (!partial) problems.when = ['is required'];
    const t = input.then;
    if (t) {
      if (t.category != null && !(chars(t.category.trim()) >= 1 && chars(t.category.trim()) <= 100))
        problems['then.category'] = ['must be 1 to 100 characters'];
      if (t.tags != null)
        try {
          t.tags = normaliseTags(t.tags, 'then.tags');
        } catch (err) {
          Object.assign(problems, ((err as AppError).details ?? {}) as Record<string, string[]>);
        }
    } else if (!partial) problems.then = ['is required'];
    if (Object.keys(problems).length) throw validationError(problems);
  }

  private static clean<T extends object>(value: T | undefined): T | undefined {
    return value && (Object.fromEntries(Object.entries(value).filter(([, v]) => v != null)) as T);
  }

  async createRule(
    ownerId: string,
    input: Required<Pick<RuleInput, 'name' | 'when' | 'then'>> & RuleInput,
  ): Promise<VaultRule> {
    this.checkRule(input, false);
    await this.caps.prepare(ownerId, [this.cap.rules.limit]);
    return inTransaction(this.dataSource, async (m) => {
      await this.caps.take(m, ownerId, { cap: this.cap.rules });
      const now = new Date();
      const rule = m.create(VaultRule, {
        id: uuidv7(),
        ownerId,
        name: input.name.trim(),
        priority: input.priority ?? 100,
        when: VaultService.clean(input.when)!,
        then: VaultService.clean(input.then)!,
        version: 1,
        createdAt: now,
        updatedAt: now,
      });
      await m.insert(VaultRule, rule);
      await publish(m, VaultRuleCreated, {
        userId: ownerId,
        resourceId: rule.id,
        data: { rule_id: rule.id, name: rule.name },
      });
      return rule;
    });
  }

  async getRule(ownerId: string, id: string): Promise<VaultRule> {
    const rule = await this.dataSource.manager.findOneBy(VaultRule, { id, ownerId });
    if (!rule) throw new AppError('not_found', 'No such rule.');
    return rule;
  }

  async updateRule(ownerId: string, id: string, version: number, input: RuleInput): Promise<VaultRule> {
    this.checkRule(input, true);
    const rule = await this.getRule(ownerId, id);
    if (rule.version !== version) throw staleVersion('rule', rule.version, version);
    const set: Partial<VaultRule> = {};
    if (input.name !== undefined) set.name = input.name.trim();
    if (input.priority !== undefined) set.priority = input.priority;
    if (input.when) set.when = VaultService.clean(input.when);
    if (input.then) set.then = VaultService.clean(input.then);
    return inTransaction(this.dataSource, async (m) => {
      if (!(await updateAtVersion(m, VaultRule, { id, ownerId }, version, { ...set, updatedAt: new Date() })))
        await lostAtVersion('rule', version, () => this.getRule(ownerId, id));
      const saved = await m.findOneByOrFail(VaultRule, { id });
      await publish(m, VaultRuleUpdated, {
        userId: ownerId,
        resourceId: id,
        data: { rule_id: id, name: saved.name, changed: Object.keys(set) },
      });
      return saved;
    });
  }

  async deleteRule(ownerId: string, id: string, version: number): Promise<VaultRule> {
    const rule = await this.getRule(ownerId, id);
    return inTransaction(this.dataSource, async (m) => {
      if (rule.version !== version || affectedRows(await m.delete(VaultRule, { id, ownerId, version })) !== 1)
        await lostAtVersion('rule', version, () => this.getRule(ownerId, id));
      await this.caps.release(m, ownerId, this.cap.rules.limit);
      await publish(m, VaultRuleDeleted, {
        userId: ownerId,
        resourceId: id,
        data: { rule_id: id, name: rule.name },
      });
      return rule;
    });
  }

  listRules(ownerId: string): Promise<VaultRule[]> {
    return this.rulesOf(ownerId);
  }

  /** Items by ids, for tests and batch reads. */
  byIds(ownerId: string, ids: string[]): Promise<VaultItem[]> {
    return this.dataSource.manager.find(VaultItem, { where: { ownerId, id: In(ids) } });
  }
}

/** vault.item.classified of an item: its category, who decided it and its tags' names. */
export const classifiedEvent = (item: VaultItem) => ({
  userId: item.ownerId,
  resourceId: item.id,
  data: itemEventData(item, {
    category: item.category,
    classification: { by: item.classifiedBy, rule_id: item.classifiedRuleId, confidence: item.classifiedConfidence },
    tags: item.tags.map((t) => t.name),
  }),
});

export type { VaultTag };
