// Full-text search over an owner's items with the database's own index, partitioned by owner
// (lib/kit/owner-search.ts: each word is indexed behind its owner's tag): on MySQL the FULLTEXT
// index on vault_items.search_words, on SQLite the vault_items_fts table. Words match as whole
// words, "quoted" text as a phrase; best match first. The cursor is an offset bound to the query
// (lib/paging.ts): a cursor of another query, or another user's, is a validation_error.
import type { DataSource, SelectQueryBuilder } from 'typeorm';
import { validationError } from '../../lib/errors';
import type { ExpensiveGate } from '../../lib/kit/expensive';
import type { ExpensiveReads } from '../../lib/kit/expensive-reads';
import { booleanModeOwnerQuery, fts5OwnerQuery, parseSearchQuery } from '../../lib/kit/owner-search';
import { decodeSearchCursor, encodeSearchCursor, Page } from '../../lib/paging';
import { VaultItem } from './entities/vault-item';
import type { ItemFilters } from './vault-service';

/** Characters of a search's `q`. */
const MAX_QUERY_LENGTH = 500;
/** How deep a search may page (offset cursor): past it, narrow the query. */
const MAX_SEARCH_OFFSET = 10_000;

export interface SearchOptions {
  mysql: boolean;
  /** Words and phrases of one `q` (SEARCH_MAX_TERMS). */
  searchMaxTerms: number;
  /** SQLite: matches ranked at most (SEARCH_CANDIDATES). */
  searchCandidates: number;
  /** The process's per-user gate on expensive operations (EXPENSIVE_PER_USER). */
  expensive: ExpensiveGate;
  /** Where the search's ranking statement runs (off the event loop on SQLite). */
  reads: ExpensiveReads;
  dataSource: DataSource;
  /** The columns a page reads (every one but the text). */
  listed: readonly string[];
}

/** A page of the items of `query` (the owner's, filtered) that match `filters.q`, best match first. */
export async function searchItems(
  query: SelectQueryBuilder<VaultItem>,
  ownerId: string,
  filters: ItemFilters,
  limit: number,
  cursor: string | null | undefined,
  options: SearchOptions,
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
    maxTerms: options.searchMaxTerms,
  }).map((t) => ({ ...t, phrase: true }));
  if (!terms.length) return { items: [], nextCursor: null };
  // The ids of a page, best match first: the kit's expensive read (off the event loop on SQLite,
  // within its share of MySQL's pool); then their rows, by id.
  query.select('item.id', 'id');
  if (options.mysql) {
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
        { match, candidates: options.searchCandidates },
      )
      .orderBy('fts.fts_rank', 'ASC')
      .addOrderBy('item.id', 'DESC');
  }
  const [sql, params] = query
    .offset(offset)
    .limit(limit + 1)
    .getQueryAndParameters();
  const ids = (
    await options.expensive.run(ownerId, 'search', () =>
      options.reads.select<{ id: string }>(options.dataSource, sql, params, ownerId),
    )
  ).map((r) => r.id);
  const page = ids.slice(0, limit);
  // By id alone (the owner is checked on each row): with the owner in the WHERE, SQLite's planner
  // took the owner's index and read every item of the user.
  const found = page.length
    ? await options.dataSource.manager
        .createQueryBuilder(VaultItem, 'item')
        .select(options.listed.map((p) => `item.${p}`))
        .where('item.id IN (:...page) AND item.deletedAt IS NULL', { page })
        .getMany()
    : [];
  const byId = new Map(found.filter((item) => item.ownerId === ownerId).map((item) => [item.id, item]));
  return {
    items: page.map((id) => byId.get(id)).filter((item): item is VaultItem => item !== undefined),
    nextCursor: ids.length > limit ? encodeSearchCursor(bound, offset + limit) : null,
  };
}
