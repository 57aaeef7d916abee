// Optimistic locking, one way for every module: a write names the version it read, the statement
// checks it (`UPDATE … WHERE id AND owner AND version = ?`), so of concurrent writes at one version
// exactly one changes the row; the others get the one stale-version refusal, 409 `conflict` with
// `details.currentVersion` (the contract's `current_version` in REST).
import type { EntityManager, EntityTarget, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { affectedRows } from '../database/portable';
import { AppError } from '../errors';

/** The one stale-version refusal. `what` names the resource ("note", "vault item"). */
export function staleVersion(what: string, current: number, expected: number): AppError {
  return new AppError('conflict', `The ${what} is at version ${current}, not ${expected}.`, {
    currentVersion: current,
  });
}

/**
 * A write at `expected` changed nothing: reads the resource again (`read` throws `not_found`
 * when it is gone, or answers null) and throws the stale-version refusal.
 */
export async function lostAtVersion(
  what: string,
  expected: number,
  read: () => Promise<{ version: number } | null>,
): Promise<never> {
  const current = await read();
  if (!current) throw new AppError('not_found', `No such ${what}.`);
  throw staleVersion(what, current.version, expected);
}

/**
 * `UPDATE entity SET …set, version = expected + 1 WHERE …where AND version = expected`: true
 * when it changed the row (the caller then writes its event), false when another write won.
 */
export async function updateAtVersion<E extends ObjectLiteral & { version: number }>(
  m: EntityManager,
  entity: EntityTarget<E>,
  where: FindOptionsWhere<E>,
  expected: number,
  set: QueryDeepPartialEntity<E>,
): Promise<boolean> {
  const result = await m.update(
    entity,
    { ...where, version: expected },
    {
      ...set,
      version: expected + 1,
    },
  );
  return affectedRows(result) === 1;
}
