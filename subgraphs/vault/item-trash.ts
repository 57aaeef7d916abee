// The vault's part of the trash (lib/kit/trash.ts): an item goes to the trash at the version the
// caller expects (gone from lists, search, counts and hub nodes; still counted by the caps, its
// file too), comes back as it was, or is purged for good (by the caller, or in batches by the
// retention's job), its caps freed and its file deleted after the commit.
import type { DataSource, EntityManager } from 'typeorm';
import { IsNull, Not } from 'typeorm';
import type { BlobStore } from '../../lib/blob-store';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError } from '../../lib/errors';
import type { BatchContext } from '../../lib/kit/jobs';
import { purgeAt, PurgeParams, TrashEntry, trashPage } from '../../lib/kit/trash';
import { publish } from '../../lib/kit/typed-events';
import { lostAtVersion } from '../../lib/kit/versioned';
import type { Page } from '../../lib/paging';
import { VaultItem } from './entities/vault-item';
import { VaultItemTag } from './entities/vault-item-tag';
import { VaultItemDeleted, VaultItemRestored, VaultItemTrashed } from './events';
import { itemEventData, liveItem, syncTags } from './item-rows';
import type { VaultCaps } from './limits';

export class VaultTrash {
  /** Told after a commit that put an item in the trash (the retention purge's timer). */
  onTrashed?: (deletedAt: Date) => void;

  constructor(
    private readonly dataSource: DataSource,
    private readonly store: BlobStore,
    private readonly caps: VaultCaps,
    private readonly retentionDays: number,
  ) {}

  /** To the trash, at the version the caller expects (a new version, `vault.item.trashed`). */
  async trash(ownerId: string, id: string, version: number): Promise<VaultItem> {
    const item = await liveItem(this.dataSource.manager, ownerId, id);
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
    if (!won) return lostAtVersion('vault item', version, () => liveItem(this.dataSource.manager, ownerId, id));
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
    await this.caps.releaseForItem(m, item);
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
}
