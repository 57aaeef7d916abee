// The per-owner row (note_owners): the caps count on it, and writing it first in a transaction
// serialises that owner's cap and folder-tree changes (a row lock on MySQL, the database's one
// writer on SQLite), so a count or a tree read after it cannot be raced.
import type { DataSource, EntityManager } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import { NoteOwner } from './entities/note-rows';

const ensured = new WeakMap<DataSource, Set<string>>();

/**
 * Makes the owner's row, outside any transaction: an INSERT IGNORE inside one would take a shared
 * lock that the UPDATE after it must upgrade, and two such transactions deadlock (MySQL). Only a
 * deleted user's cascade removes the row, and such a user writes nothing more.
 */
export async function ensureOwnerRow(dataSource: DataSource, ownerId: string): Promise<void> {
  let known = ensured.get(dataSource);
  if (!known) ensured.set(dataSource, (known = new Set()));
  if (known.has(ownerId)) return;
  await dataSource.manager
    .createQueryBuilder()
    .insert()
    .into(NoteOwner)
    .values({ ownerId, noteCount: 0, folderCount: 0 })
    .orIgnore()
    .execute();
  if (known.size > 100_000) known.clear();
  known.add(ownerId);
}

/** Locks the owner's row (made by ensureOwnerRow) until the transaction ends. */
export async function lockOwner(m: EntityManager, ownerId: string): Promise<void> {
  await m
    .createQueryBuilder()
    .update(NoteOwner)
    .set({ noteCount: () => 'note_count' })
    .where('owner_id = :ownerId', { ownerId })
    .execute();
}

/** Counts `n` more of `what` if that stays within `cap` (locking the row); false when it would not. */
export async function takeSlots(
  m: EntityManager,
  ownerId: string,
  what: 'notes' | 'folders',
  n: number,
  cap: number,
): Promise<boolean> {
  const column = what === 'notes' ? 'note_count' : 'folder_count';
  const result = await m
    .createQueryBuilder()
    .update(NoteOwner)
    .set(what === 'notes' ? { noteCount: () => `${column} + ${n}` } : { folderCount: () => `${column} + ${n}` })
    .where(`owner_id = :ownerId AND ${column} + :n <= :cap`, { ownerId, n, cap })
    .execute();
  return affectedRows(result) === 1;
}

/** Counts `n` fewer of `what` (a delete). */
export async function releaseSlots(m: EntityManager, ownerId: string, what: 'notes' | 'folders', n: number) {
  const column = what === 'notes' ? 'note_count' : 'folder_count';
  await m
    .createQueryBuilder()
    .update(NoteOwner)
    .set(what === 'notes' ? { noteCount: () => `${column} - ${n}` } : { folderCount: () => `${column} - ${n}` })
    .where('owner_id = :ownerId', { ownerId })
    .execute();
}
