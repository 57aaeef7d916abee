// The notes module's caps on the kit's counters (lib/kit/user-caps.ts). The owner's
// NOTES_PER_USER row also serialises that owner's folder-tree changes: writing it first in a
// transaction (a row lock on MySQL, the database's one writer on SQLite) means a count or a tree
// read after it cannot be raced. Every transaction takes that row before the folders' row, so
// two of them never wait on each other in a circle.
import type { DataSource, EntityManager } from 'typeorm';
import { Cap, UserCaps } from '../../lib/kit/user-caps';

export const NOTES_CAP = 'NOTES_PER_USER';
export const FOLDERS_CAP = 'NOTE_FOLDERS_PER_USER';

const kits = new WeakMap<DataSource, UserCaps>();
const capsOf = (dataSource: DataSource): UserCaps => {
  let caps = kits.get(dataSource);
  if (!caps) kits.set(dataSource, (caps = new UserCaps(dataSource)));
  return caps;
};
const capsIn = (m: EntityManager) => capsOf(m.connection);

/** Makes the owner's counter rows, outside any transaction (see UserCaps.prepare). */
export function ensureOwnerRow(dataSource: DataSource, ownerId: string): Promise<void> {
  return capsOf(dataSource).prepare(ownerId, [NOTES_CAP, FOLDERS_CAP]);
}

/** Locks the owner's row (made by ensureOwnerRow) until the transaction ends. */
export function lockOwner(m: EntityManager, ownerId: string): Promise<void> {
  return capsIn(m).lock(m, ownerId, NOTES_CAP);
}

/** Counts `n` more of `cap` within its maximum (the owner's row locked first), or refuses (409). */
export async function takeSlots(m: EntityManager, ownerId: string, cap: Cap, n: number): Promise<void> {
  if (cap.limit !== NOTES_CAP) await lockOwner(m, ownerId);
  await capsIn(m).take(m, ownerId, { cap, n });
}

/** Counts `n` fewer of `limit` (a delete). */
export async function releaseSlots(m: EntityManager, ownerId: string, limit: string, n: number): Promise<void> {
  if (limit !== NOTES_CAP) await lockOwner(m, ownerId);
  await capsIn(m).release(m, ownerId, limit, n);
}

/** A deleted user's counters, once their notes and folders are gone. */
export function forgetOwner(m: EntityManager, ownerId: string): Promise<void> {
  return capsIn(m).forget(m, ownerId);
}
