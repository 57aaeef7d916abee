// Paging, the same for every list field (voices, syntheses, sessions, users): the arguments,
// the page type, the cursor and the keyset query. A list names its order; the rest is here.
import crypto from 'node:crypto';
import { IsOptional, Max, MaxLength, Min } from 'class-validator';
import { ArgsType, type ClassType, Field, Int, ObjectType } from 'type-graphql';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { validationError } from './errors';
import { isUuid } from './validators';
import { Authenticated } from './scopes';

export const MAX_PAGE_SIZE = 100;
/** Longer was not handed out by pageOf: a 64-character key in JSON escapes is at most 388 bytes, 518 in base64url. */
const MAX_CURSOR_LENGTH = 600;

@ArgsType()
export class PageArgs {
  @Field(() => Int, { defaultValue: 20, description: `Page size, 1 to ${MAX_PAGE_SIZE}.` })
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  first!: number;

  @Field(() => String, { nullable: true, description: 'nextCursor of the previous page.' })
  @IsOptional()
  @MaxLength(MAX_CURSOR_LENGTH)
  after?: string | null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * The GraphQL page of `itemType`, type-graphql's generic-types pattern: a list declares
 * `@ObjectType({ description }) class VoicePage extends PageOf(Voice) {}`, so its type keeps its
 * own name and description.
 */
export function PageOf<T extends object>(itemType: ClassType<T>) {
  @ObjectType() // never in the schema itself: nothing returns it, only the classes that extend it
  abstract class PageType implements Page<T> {
    // A page needs a caller; what its items need, their type declares (lib/scopes.ts).
    @Authenticated()
    @Field(() => [itemType])
    items!: T[];
    @Authenticated()
    @Field(() => String, { nullable: true, description: 'Pass as `after` for the next page; null on the last page.' })
    nextCursor!: string | null;
  }
  return PageType;
}

/**
 * What one value of a cursor must be: a UUID, a moment (milliseconds), a key text of at most 64
 * characters, or a flag (a boolean column, written 0 or 1 and compared as such).
 */
export type CursorKind = 'uuid' | 'time' | 'text' | 'flag';
type CursorValue = string | Date | number | boolean;

const badCursor = () => validationError({ cursor: ['is not a cursor this service handed out'] });

/** A cursor: base64url of the JSON array of the last item's order keys (dates as milliseconds, flags as 0 or 1). */
export function encodeCursor(values: CursorValue[]): string {
  const written = values.map((v) => (v instanceof Date ? v.getTime() : typeof v === 'boolean' ? Number(v) : v));
  return Buffer.from(JSON.stringify(written)).toString('base64url');
}

/**
 * The order keys of a cursor, each checked against its kind: anything else is a validation_error,
 * never a query. Not signed: its values are bound parameters under the list's own filters (the
 * caller's rows), so a made-up cursor can only move where the caller's own list starts.
 */
export function decodeCursor(cursor: string, kinds: readonly CursorKind[]): CursorValue[] {
  if (cursor.length > MAX_CURSOR_LENGTH) throw badCursor();
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(values) || values.length !== kinds.length || encodeCursor(values as CursorValue[]) !== cursor)
    throw badCursor();
  return kinds.map((kind, i) => {
    const v: unknown = values[i];
    if (kind === 'time' && Number.isSafeInteger(v)) return new Date(v as number);
    if (kind === 'uuid' && typeof v === 'string' && isUuid(v)) return v;
    if (kind === 'text' && typeof v === 'string' && v.length >= 1 && v.length <= 64) return v;
    if (kind === 'flag' && (v === 0 || v === 1)) return v;
    throw badCursor();
  });
}

/** What binds a search cursor to its query: 16 characters of the SHA-256 of the query's JSON. */
const queryKey = (query: unknown) =>
  crypto.createHash('sha256').update(JSON.stringify(query)).digest('base64url').slice(0, 16);
const notThisQuery = () => validationError({ cursor: ['is not a cursor this service handed out for this query'] });

/**
 * A search's cursor: how deep it has paged (an offset into its ranked results), bound to the query
 * it was made for. `query` is everything that makes the results (the owner, the text, the filters),
 * the same value at encoding and decoding: a cursor of another query, or another user's, is a
 * validation_error, so it cannot page into results it was not made for.
 */
export function encodeSearchCursor(query: unknown, offset: number): string {
  return encodeCursor([queryKey(query), `o${offset}`]);
}

/** The offset of a search cursor made by encodeSearchCursor for this `query` (1 or more). */
export function decodeSearchCursor(cursor: string, query: unknown): number {
  const [key, offset] = decodeCursor(cursor, ['text', 'text']) as string[];
  const m = /^o([1-9]\d{0,8})$/.exec(offset);
  if (key !== queryKey(query) || !m) throw notThisQuery();
  return Number(m[1]);
}

/** A list's order: entity properties, most significant first, all in one direction; the last must be unique. */
export interface PageOrder<T> {
  keys: readonly { property: keyof T & string; kind: CursorKind }[];
  direction: 'ASC' | 'DESC';
}

/**
 * One page of `query` (its filters already applied) in `order`, `limit` rows after `cursor`:
 * a keyset condition on the cursor's keys, one row more than asked to learn whether a next
 * page exists, and the cursor of the page's last row.
 */
export async function pageOf<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  order: PageOrder<T>,
  limit: number,
  cursor?: string | null,
): Promise<Page<T>> {
  const column = (i: number) => `${query.alias}.${order.keys[i].property}`;
  if (cursor) {
    const values = decodeCursor(
      cursor,
      order.keys.map((k) => k.kind),
    );
    const beyond = order.direction === 'ASC' ? '>' : '<';
    // (a, b) beyond (x, y), spelled out: a beyond x OR (a = x AND b beyond y).
    const terms = order.keys.map((_, i) =>
      [
        ...order.keys.slice(0, i).map((__, j) => `${column(j)} = :pageAfter${j}`),
        `${column(i)} ${beyond} :pageAfter${i}`,
      ].join(' AND '),
    );
    query.andWhere(
      `(${terms.map((t) => `(${t})`).join(' OR ')})`,
      Object.fromEntries(values.map((v, i) => [`pageAfter${i}`, v])),
    );
  }
  order.keys.forEach((_, i) =>
    i ? query.addOrderBy(column(i), order.direction) : query.orderBy(column(i), order.direction),
  );
  const rows = await query.take(limit + 1).getMany();
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    nextCursor: rows.length > limit ? encodeCursor(order.keys.map((k) => last[k.property] as CursorValue)) : null,
  };
}
