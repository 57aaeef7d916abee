// Full-text search over title and body with the database's own index (docs/notes.md):
// - SQLite: an FTS5 table (`unicode61`, diacritics removed), written in the note's transaction;
// - MySQL/MariaDB: an InnoDB FULLTEXT index on notes(title, body), with the ngram parser where the
//   server has it (MySQL; MariaDB has none).
// A query is the words of `q`: every word must match, as a word or the start of one; text in
// "double quotes" must match as a phrase.
import type { EntityManager, QueryRunner } from 'typeorm';
import { validationError } from '../../lib/errors';

const FTS_TABLE = 'notes_fts';
const FULLTEXT_INDEX = 'notes_fulltext';
export const MAX_QUERY_LENGTH = 200;
const MAX_TERMS = 16;

const isSqliteRunner = (q: QueryRunner) => q.connection.options.type === 'better-sqlite3';
const isSqliteManager = (m: EntityManager) => m.connection.options.type === 'better-sqlite3';

/** Whether this MySQL server has the ngram full-text parser (MySQL ≥ 5.7.6; MariaDB has none). */
async function hasNgram(queryRunner: QueryRunner): Promise<boolean> {
  const rows = (await queryRunner.query(
    "SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'ngram' AND PLUGIN_STATUS = 'ACTIVE'",
  )) as unknown[];
  return rows.length > 0;
}

export async function createSearchIndex(queryRunner: QueryRunner): Promise<void> {
  if (isSqliteRunner(queryRunner)) {
    // Its rowid is notes.search_id. remove_diacritics 2: "café" and "cafe" are one word.
    await queryRunner.query(
      `CREATE VIRTUAL TABLE ${FTS_TABLE} USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')`,
    );
  } else {
    const parser = (await hasNgram(queryRunner)) ? ' WITH PARSER ngram' : '';
    await queryRunner.query(`ALTER TABLE notes ADD FULLTEXT INDEX ${FULLTEXT_INDEX} (title, body)${parser}`);
  }
}

export async function dropSearchIndex(queryRunner: QueryRunner): Promise<void> {
  if (isSqliteRunner(queryRunner)) await queryRunner.query(`DROP TABLE ${FTS_TABLE}`);
  else await queryRunner.query(`ALTER TABLE notes DROP INDEX ${FULLTEXT_INDEX}`);
}

/**
 * Puts a note's title and body in the index, in the caller's transaction; returns its search id
 * (SQLite's FTS rowid; null on MySQL, whose index follows the row itself).
 */
export async function indexNote(
  m: EntityManager,
  searchId: number | null,
  title: string,
  body: string,
): Promise<number | null> {
  if (!isSqliteManager(m)) return null;
  if (searchId !== null) {
    await m.query(`UPDATE ${FTS_TABLE} SET title = ?, body = ? WHERE rowid = ?`, [title, body, searchId]);
    return searchId;
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

/** The terms of `q`: phrases ("…") and words, each with at least one letter or digit (none: nothing matches). */
export function searchTerms(q: string): { phrase: boolean; words: string[] }[] {
  if ([...q].length > MAX_QUERY_LENGTH)
    throw validationError({ q: [`must be at most ${MAX_QUERY_LENGTH} characters`] });
  const terms: { phrase: boolean; words: string[] }[] = [];
  const text = q.normalize('NFC');
  const pattern = /"([^"]*)"|(\S+)/g;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    // The words a term is made of, as both indexes cut them: runs of letters, marks and digits.
    const words = (m[1] ?? m[2]).match(/[\p{L}\p{M}\p{N}_]+/gu) ?? [];
    if (words.length) terms.push({ phrase: m[1] !== undefined, words });
  }
  if (terms.length > MAX_TERMS) throw validationError({ q: [`may have at most ${MAX_TERMS} words and phrases`] });
  return terms;
}

/** The FTS5 query: every term, words as prefixes, phrases as phrases (each word quoted: no operator gets through). */
function fts5Query(terms: ReturnType<typeof searchTerms>): string {
  return terms
    .map((t) => (t.phrase || t.words.length > 1 ? `"${t.words.join(' ')}"` : `"${t.words[0]}"*`))
    .join(' AND ');
}

/** What this MySQL server's FULLTEXT index leaves out: its stopwords (and words under its minimum size). */
interface FulltextRules {
  ngram: boolean;
  stopwords: Set<string>;
}
const fulltextRules = new WeakMap<object, Promise<FulltextRules>>();

function rulesOf(m: EntityManager): Promise<FulltextRules> {
  let rules = fulltextRules.get(m.connection);
  if (!rules) {
    rules = (async () => {
      const plugins = await m.query<unknown[]>(
        "SELECT PLUGIN_NAME FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'ngram' AND PLUGIN_STATUS = 'ACTIVE'",
      );
      const words = await m.query<{ value: string }[]>(
        'SELECT value FROM information_schema.INNODB_FT_DEFAULT_STOPWORD',
      );
      return { ngram: plugins.length > 0, stopwords: new Set(words.map((w) => w.value)) };
    })();
    fulltextRules.set(m.connection, rules);
    rules.catch(() => fulltextRules.delete(m.connection));
  }
  return rules;
}

/**
 * InnoDB's boolean mode: every term required (+), words as prefixes (*), phrases quoted. Without
 * the ngram parser, a stopword (never indexed) would make a required term that nothing matches:
 * stopwords are left out of the query. Null when nothing is left.
 */
function booleanModeQuery(terms: ReturnType<typeof searchTerms>, rules: FulltextRules): string | null {
  // A short word stays: as a prefix it finds the longer words that start with it.
  const indexed = (word: string) => rules.ngram || !rules.stopwords.has(word.toLowerCase());
  const parts = terms
    .filter((t) => t.phrase || t.words.length > 1 || indexed(t.words[0]))
    .map((t) => (t.phrase || t.words.length > 1 ? `+"${t.words.join(' ')}"` : `+${t.words[0]}*`));
  return parts.length ? parts.join(' ') : null;
}

export interface SearchFilter {
  /** SQL over the notes row `n` (with `?` placeholders) and its parameters. */
  where: string;
  params: unknown[];
}

/**
 * One page of the ids of the owner's notes matching `terms`, best match first (ties by id),
 * `limit` after the first `offset`, within `filter`.
 */
export async function searchNoteIds(
  m: EntityManager,
  terms: ReturnType<typeof searchTerms>,
  filter: SearchFilter,
  limit: number,
  offset: number,
): Promise<string[]> {
  let rows: { id: string }[];
  if (!terms.length) return [];
  if (isSqliteManager(m)) {
    // The index's hits first, then each one's note (MATERIALIZED and CROSS JOIN fix that order:
    // the planner would otherwise walk all the owner's notes), then the filters. bm25 with a title hit weighing 5 body
    // hits; lower is better.
    rows = await m.query(
      `WITH hits AS MATERIALIZED (
         SELECT rowid AS search_id, bm25(${FTS_TABLE}, 5.0, 1.0) AS score FROM ${FTS_TABLE} WHERE ${FTS_TABLE} MATCH ?
       )
       SELECT n.id AS id FROM hits CROSS JOIN notes n ON n.search_id = hits.search_id
       WHERE ${filter.where}
       ORDER BY hits.score, n.id LIMIT ? OFFSET ?`,
      [fts5Query(terms), ...filter.params, limit, offset],
    );
  } else {
    const against = booleanModeQuery(terms, await rulesOf(m));
    if (against === null) return [];
    rows = await m.query(
      `SELECT n.id AS id, MATCH (n.title, n.body) AGAINST (? IN BOOLEAN MODE) AS score FROM notes n
       WHERE MATCH (n.title, n.body) AGAINST (? IN BOOLEAN MODE) AND ${filter.where}
       ORDER BY score DESC, n.id LIMIT ? OFFSET ?`,
      [against, against, ...filter.params, limit, offset],
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
