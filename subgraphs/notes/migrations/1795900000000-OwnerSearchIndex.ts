import { MigrationInterface, QueryRunner } from 'typeorm';
import { ownerWords } from '../../../lib/kit/owner-search';
import { FTS5_OWNER_TABLE } from '../search';

/** Notes read per batch of the backfill. */
const BATCH = 500;

interface Row {
  id: string;
  owner_id: string;
  title: string;
  body: string;
  search_id: number | null;
}

/**
 * The search index partitioned by owner (lib/kit/owner-search.ts, issue 41 finding 2): the index
 * over every user's words is replaced by one whose words carry their owner's tag, and every
 * existing note is written to it (SQLite under its old rowid, notes.search_id; MySQL in the new
 * column notes.search_words, under a new FULLTEXT index).
 */
export class OwnerSearchIndex1795900000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    if (sqlite) {
      await queryRunner.query('DROP TABLE notes_fts');
      await queryRunner.query(FTS5_OWNER_TABLE);
    } else {
      await queryRunner.query('ALTER TABLE notes DROP INDEX notes_fulltext');
      await queryRunner.query('ALTER TABLE notes ADD COLUMN search_words MEDIUMTEXT NULL');
    }
    for (let after = ''; ;) {
      const rows = (await queryRunner.query(
        'SELECT id, owner_id, title, body, search_id FROM notes WHERE id > ? ORDER BY id LIMIT ?',
        [after, BATCH],
      )) as Row[];
      if (!rows.length) break;
      for (const r of rows) {
        const title = ownerWords(r.owner_id, r.title);
        const body = ownerWords(r.owner_id, r.body);
        if (!sqlite)
          await queryRunner.query('UPDATE notes SET search_words = ? WHERE id = ?', [`${title} ${body}`, r.id]);
        else if (r.search_id !== null)
          await queryRunner.query('INSERT INTO notes_fts (rowid, title, body) VALUES (?, ?, ?)', [
            r.search_id,
            title,
            body,
          ]);
      }
      after = rows[rows.length - 1].id;
    }
    // MySQL: the index built once over the filled column (cheaper than kept up row by row).
    if (!sqlite) await queryRunner.query('ALTER TABLE notes ADD FULLTEXT INDEX notes_search_words (search_words)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    if (sqlite) {
      await queryRunner.query('DROP TABLE notes_fts');
      await queryRunner.query(
        `CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')`,
      );
      await queryRunner.query(
        'INSERT INTO notes_fts (rowid, title, body) SELECT search_id, title, body FROM notes WHERE search_id IS NOT NULL',
      );
    } else {
      await queryRunner.query('ALTER TABLE notes DROP INDEX notes_search_words');
      await queryRunner.query('ALTER TABLE notes DROP COLUMN search_words');
      await queryRunner.query('ALTER TABLE notes ADD FULLTEXT INDEX notes_fulltext (title, body)');
    }
  }
}
