// The vault's items once captured: reads and lists (filters; full text in search.ts), counts,
// file content, changes and deletes at the expected version, a link fetched again, an item
// classified again; each change's event written in the same transaction (lib/outbox.ts). Capture
// is capture.ts, the trash item-trash.ts, rules rule-service.ts; enrichment and training run in
// the background (enrichment-worker.ts).
import type { DataSource, SelectQueryBuilder } from 'typeorm';
import { In, IsNull } from 'typeorm';
import type { BlobStore } from '../../lib/blob-store';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError } from '../../lib/errors';
import { publish } from '../../lib/kit/typed-events';
import { lostAtVersion, updateAtVersion } from '../../lib/kit/versioned';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import { classify } from './classifier';
import { ClassifiedBy, TagSource, VaultItem, VaultItemKind, VaultItemState } from './entities/vault-item';
import { VaultItemTag } from './entities/vault-item-tag';
import { VaultItemClassified, VaultItemDeleted, VaultItemUpdated } from './events';
import { checkCategory, checkTitle, normaliseTags } from './item-fields';
import { classifiedEvent, itemEventData, itemSearchWords, liveItem, syncTags, vaultWorkAdded } from './item-rows';
import type { VaultTrash } from './item-trash';
import type { VaultCaps, VaultLimits } from './limits';
import type { Predictors } from './predictors';
import type { VaultRules } from './rule-service';
import { searchItems } from './search';

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

/** What the item service works with besides its database: the other parts of the vault. */
export interface VaultParts {
  caps: VaultCaps;
  trash: VaultTrash;
  rules: VaultRules;
  predictors: Predictors;
}

export class VaultService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly store: BlobStore,
    private readonly limits: VaultLimits,
    private readonly parts: VaultParts,
  ) {}

  private get mysql() {
    return this.dataSource.options.type === 'mysql';
  }

  // ---- reads -----------------------------------------------------------------------------

  /** Another user's item is `not_found`, exactly like an unknown id. */
  get(ownerId: string, id: string): Promise<VaultItem> {
    return liveItem(this.dataSource.manager, ownerId, id);
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

  /** A page of the owner's items, newest first; with `q`, the ones that match, best match first (search.ts). */
  async list(ownerId: string, filters: ItemFilters, limit: number, cursor?: string | null): Promise<Page<VaultItem>> {
    if (filters.q != null && filters.q.trim())
      return searchItems(this.filtered(ownerId, filters), ownerId, filters, limit, cursor, {
        mysql: this.mysql,
        searchMaxTerms: this.limits.searchMaxTerms,
        searchCandidates: this.limits.searchCandidates,
        expensive: this.limits.expensive,
        reads: this.limits.reads,
        dataSource: this.dataSource,
        listed: LISTED,
      });
    return pageOf(this.filtered(ownerId, filters), ORDER, limit, cursor);
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

  /** Items by ids, for tests and batch reads. */
  byIds(ownerId: string, ids: string[]): Promise<VaultItem[]> {
    return this.dataSource.manager.find(VaultItem, { where: { ownerId, id: In(ids) } });
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
        if (title) checkTitle(title);
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
   * To the trash (item-trash.ts): gone from lists, search, counts and hub nodes, still counted by
   * the caps (its file too) until purged; `permanent`: deleted at once.
   */
  async delete(ownerId: string, id: string, version: number, permanent = false): Promise<VaultItem> {
    if (!permanent) return this.parts.trash.trash(ownerId, id, version);
    const item = await this.get(ownerId, id);
    const won =
      item.version === version &&
      (await inTransaction(this.dataSource, async (m) => {
        // At the state read, so the pending count is released exactly once (a worker's give-up
        // changes the state without a new version).
        if (affectedRows(await m.delete(VaultItem, { id, ownerId, version, state: item.state })) !== 1) return false;
        await this.parts.caps.releaseForItem(m, item);
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

  /** A link is enriched again: back to pending (the pending cap applies). */
  async refetch(ownerId: string, id: string): Promise<VaultItem> {
    const item = await this.get(ownerId, id);
    if (item.kind !== VaultItemKind.LINK)
      throw new AppError('conflict', 'Only links are fetched.', { kind: item.kind });
    if (item.state === VaultItemState.PENDING) return item;
    const { caps, cap } = this.parts.caps;
    await caps.prepare(ownerId, [cap.pending.limit]);
    return inTransaction(this.dataSource, async (m) => {
      await caps.take(m, ownerId, { cap: cap.pending });
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
        await this.parts.caps.releasePending(m, ownerId); // changed meanwhile: not made pending here
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
    const { rules, predictors } = this.parts;
    const decided = classify(item, await rules.rulesOf(ownerId), await predictors.predictor(ownerId), this.limits);
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
}
