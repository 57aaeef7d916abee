// Capture: a new item (a link, a text or a file) with its duplicates refused (the same url key or
// the same file bytes, trash included), its caps taken and its event written in the same
// transaction; and the hubs quick-add saga's capture, inside the event consumer's transaction.
import type { DataSource, EntityManager } from 'typeorm';
import type { BlobStore } from '../../lib/blob-store';
import { isUniqueViolation } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError } from '../../lib/errors';
import { publish } from '../../lib/kit/typed-events';
import { VaultItem } from './entities/vault-item';
import { VaultItemCaptured } from './events';
import { CaptureInput, captureRow } from './capture-input';
import { itemEventData, itemSearchWords, syncTags, vaultWorkAdded } from './item-rows';
import type { VaultCaps, VaultLimits } from './limits';

export class VaultCapture {
  /** Duplicates found in the trash (until purged they keep their URL and content: restore or purge them). */
  private readonly trashedDuplicates = new Set<string>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly store: BlobStore,
    private readonly limits: VaultLimits,
    private readonly caps: VaultCaps,
  ) {}

  async capture(ownerId: string, input: CaptureInput): Promise<VaultItem> {
    const manager = this.dataSource.manager;
    const { item, bytes } = await captureRow(manager, ownerId, input, this.limits);
    const existing = await this.duplicateOf(manager, item);
    if (existing) throw this.duplicate(existing);
    const { items, pending, fileBytes } = this.caps.cap;
    await this.caps.caps.prepare(ownerId, [items.limit, pending.limit, fileBytes.limit]);
    // The bytes first: a row never points at a file that is not there (a failed insert removes them).
    if (bytes) await this.store.put(item.blobKey!, bytes);
    try {
      return await inTransaction(this.dataSource, async (m) => {
        await this.caps.takeForItem(m, item);
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
    const { item } = await captureRow(
      this.dataSource.manager,
      ownerId,
      input.text != null ? { text: input.text } : { url: input.url },
      this.limits,
    );
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
    await this.caps.takeForItem(m, item);
    return this.insert(m, item, source);
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

  private duplicate(id: string): AppError {
    if (this.trashedDuplicates.delete(id))
      return new AppError('conflict', 'That is in your trash: restore it, or purge it first.', {
        existingId: id,
        inTrash: true,
      });
    return new AppError('conflict', 'That is already in your vault.', { existingId: id });
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
}
