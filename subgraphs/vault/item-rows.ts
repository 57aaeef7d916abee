// What every write of an item shares: its live row by owner, its tag rows, its search words, its
// events' data and the enrichment workers' wake-up, so capture, changes, trash and the worker
// write them alike.
import type { DataSource, EntityManager } from 'typeorm';
import { IsNull } from 'typeorm';
import { AppError } from '../../lib/errors';
import { ownerWords } from '../../lib/kit/owner-search';
import { databaseTopic, workAdded } from '../../lib/wakeups';
import { VaultItem } from './entities/vault-item';
import { VaultItemTag } from './entities/vault-item-tag';

/** One of the owner's items, not in the trash: another user's item is `not_found`, exactly like an unknown id. */
export async function liveItem(m: EntityManager, ownerId: string, id: string): Promise<VaultItem> {
  const item = await m.findOneBy(VaultItem, { id, ownerId, deletedAt: IsNull() });
  if (!item) throw new AppError('not_found', 'No such vault item.');
  return item;
}

/** The wake-up topic of the enrichment workers of one vault database (lib/wakeups.ts). */
export function vaultTopic(dataSource: DataSource): string {
  return databaseTopic('vault', dataSource);
}

/** The transaction under way adds work for the enrichment workers: each process's is told once it commits. */
export function vaultWorkAdded(m: EntityManager): void {
  workAdded(m.connection, vaultTopic(m.connection));
}

/** The search index's words of an item (lib/kit/owner-search.ts): its title, text and url, behind its owner's tag. */
export const itemSearchWords = (item: Pick<VaultItem, 'ownerId' | 'title' | 'text' | 'url'>): string =>
  ownerWords(item.ownerId, item.title, item.text, item.url);

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

/** Writes an item's tag rows to match its `tags` (for the tag filter and counts). */
export async function syncTags(m: EntityManager, item: Pick<VaultItem, 'id' | 'ownerId' | 'tags'>): Promise<void> {
  await m.delete(VaultItemTag, { itemId: item.id });
  if (item.tags.length)
    await m.insert(
      VaultItemTag,
      item.tags.map((t) => ({ itemId: item.id, name: t.name, ownerId: item.ownerId })),
    );
}
