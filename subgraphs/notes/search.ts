// Full-text search over title and body with the database's own index, partitioned by owner
// (lib/kit/owner-search.ts: each word is indexed behind its owner's tag, so a search reads its
// user's postings only; docs/notes.md):
// - SQLite: a contentless FTS5 table (`unicode61`, diacritics removed; prefix indexes of one and
//   two letters behind the tag), written in the note's transaction;
// - MySQL/MariaDB: an InnoDB FULLTEXT index on notes.search_words, the tagged words of title
//   and body, written with the note.
// A query is the words of `q`: every word must match, as a word or the start of one; text in
// "double quotes" must match as a phrase. At most SEARCH_MAX_TERMS of them.
import type { DataSource, EntityManager } from 'typeorm';
import type { ExpensiveReads } from '../../lib/kit/expensive-reads';
import {
  booleanModeOwnerQuery,
  fts5OwnerQuery,
  OWNER_TAG_LENGTH,
  ownerWords,
  parseSearchQuery,
  SearchTerm,
} from '../../lib/kit/owner-search';

const FTS_TABLE = 'notes_fts';
export const MAX_QUERY_LENGTH = 200;

const isSqliteManager = (m: EntityManager) => m.connection.options.type === 'better-sqlite3';

/**
 * The FTS5 table: contentless (the notes table keeps the text; the index needs only its words),
 * deletable by rowid, with prefix indexes for a word's first one and two letters behind the
 * owner's tag (a one-letter prefix would otherwise merge every term of the user that starts with it).
 */
export const FTS5_OWNER_TABLE = `CREATE VIRTUAL TABLE ${FTS_TABLE} USING fts5(title, body, content = '', contentless_delete = 1, prefix = '${OWNER_TAG_LENGTH + 1} ${OWNER_TAG_LENGTH + 2}', tokenize = 'unicode61 remove_diacritics 2')`;

export interface IndexedNote {
  id: string;
  ownerId: string;
  searchId: number | null;
  title: string;
  body: string;
}

/**
 * Puts a note's title and body in the index, in the caller's transaction; returns its search id
 * (SQLite's FTS rowid; null on MySQL, whose words are a column of the note's row: call it after
 * the row is inserted).
 */
export async function indexNote(m: EntityManager, note: IndexedNote): Promise<number | null> {
  const title = ownerWords(note.ownerId, note.title);
  const body = ownerWords(note.ownerId, note.body);
  if (!isSqliteManager(m)) {
    await m.query('UPDATE notes SET search_words = ? WHERE id = ?', [`${title} ${body}`, note.id]);
    return null;
  }
  if (note.searchId !== null) {
    await m.query(`UPDATE ${FTS_TABLE} SET title = ?, body = ? WHERE rowid = ?`, [title, body, note.searchId]);
    return note.searchId;
  }
  await m.query(`INSERT INTO ${FTS_TABLE} (title, body) VALUES (?, ?)`, [title, body]);
  // SQLite's one connection, in this transaction: the row just inserted.
  const [row]: { id: number }[] = await m.query('SELECT last_insert_rowid() AS id');
  return Number(row.id);
}

/** Takes notes out of the index (SQLite; MySQL's index loses the rows with them). */
export async function unindexNotes(m: EntityManager, searchIds: (number | null)[]): Promise<void> {
  const ids = searchIds.filter((id): id is number => id !== null);
  if (!isSqliteManager(m) || !ids.length) return;
  await m.query(`DELETE FROM ${FTS_TABLE} WHERE rowid IN (${ids.map(() => '?').join(', ')})`, ids);
}

/** The terms of `q` (400 beyond MAX_QUERY_LENGTH characters or `maxTerms` terms). */
export function searchTerms(q: string, maxTerms: number): SearchTerm[] {
  return parseSearchQuery(q.normalize('NFC'), { maxLength: MAX_QUERY_LENGTH, maxTerms });
}

export interface SearchFilter {
  /** SQL over the notes row `n` (with `?` placeholders) and its parameters. */
  where: string;
  params: unknown[];
}

/**
 * One page of the ids of the owner's notes matching `terms`, best match first (ties by id),
 * `limit` after the first `offset`, within `filter`. On SQLite only the newest `candidates`
 * matches are ranked, so that a search's cost is bounded whatever the user stores. The statement
 * is one of the kit's expensive reads: off the event loop on SQLite, within its share of MySQL's pool.
 */
export async function searchNoteIds(
  reads: ExpensiveReads,
  dataSource: DataSource,
  ownerId: string,
  terms: SearchTerm[],
  filter: SearchFilter,
  page: { limit: number; offset: number; candidates: number },
): Promise<string[]> {
  let rows: { id: string }[];
  if (!terms.length) return [];
  if (isSqliteManager(dataSource.manager)) {
    const match = fts5OwnerQuery(ownerId, terms);
    // The newest candidates (FTS5 walks its matches by rowid, newest first, and stops), then
    // those ranked (bm25 with a title hit weighing 5 body hits; lower is better), then each
    // one's note (MATERIALIZED and CROSS JOIN fix that order: the planner would otherwise walk
    // all the owner's notes), then the filters.
    rows = await reads.select(
      dataSource,
      `WITH candidates AS MATERIALIZED (
         SELECT rowid AS search_id FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ? ORDER BY rowid DESC LIMIT ?
       ),
       hits AS MATERIALIZED (
         SELECT rowid AS search_id, bm25(${FTS_TABLE}, 5.0, 1.0) AS score FROM ${FTS_TABLE}
         WHERE ${FTS_TABLE} MATCH ? AND rowid >= (SELECT MIN(search_id) FROM candidates)
       )
       SELECT n.id AS id FROM hits CROSS JOIN notes n ON n.search_id = hits.search_id
       WHERE ${filter.where}
       ORDER BY hits.score, n.id LIMIT ? OFFSET ?`,
      [match, page.candidates, match, ...filter.params, page.limit, page.offset],
      ownerId,
    );
  } else {
    // The owner's words only: InnoDB reads and ranks the postings of this user's tag.
    const against = booleanModeOwnerQuery(ownerId, terms);
    rows = await reads.select(
      dataSource,
      `SELECT n.id AS id, MATCH (n.search_words) AGAINST (? IN BOOLEAN MODE) AS score FROM notes n
       WHERE MATCH (n.search_words) AGAINST (? IN BOOLEAN MODE) AND ${filter.where}
       ORDER BY score DESC, n.id LIMIT ? OFFSET ?`,
      [against, against, ...filter.params, page.limit, page.offset],
      ownerId,
    );
  }
  return rows.map((r) => r.id);
}

/** The size of the index on disk, in bytes, for the benchmark (SQLite: its shadow tables' pages). */
export async function searchIndexBytes(m: EntityManager): Promise<number | null> {
  if (isSqliteManager(m)) {
    try {
      const [row]: { bytes: number }[] = await m.query(
        `SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name LIKE '${FTS_TABLE}%'`,
      );
      return Number(row.bytes);
    } catch {
      return null; // dbstat is a compile-time option
    }
  }
  // InnoDB keeps a FULLTEXT index in auxiliary tables (`<db>/FTS_…`), each a file of its own.
  for (const view of ['INNODB_SYS_TABLESPACES', 'INNODB_TABLESPACES']) {
    try {
      const [row] = await m.query<{ bytes: number | string | null }[]>(
        `SELECT SUM(FILE_SIZE) AS bytes FROM information_schema.${view} WHERE NAME LIKE CONCAT(DATABASE(), '/fts%')`,
      );
      if (row?.bytes !== null && row?.bytes !== undefined) return Number(row.bytes);
    } catch {
      // MariaDB names the view INNODB_SYS_TABLESPACES, MySQL 8 INNODB_TABLESPACES
    }
  }
  return null;
}
