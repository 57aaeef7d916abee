import { MigrationInterface, QueryRunner } from 'typeorm';
import { OWNER_TAG_LENGTH, ownerWords } from '../../../lib/kit/owner-search';

/** Items read per batch of the backfill. */
const BATCH = 200;

/**
 * The search index partitioned by owner (lib/kit/owner-search.ts, issue 41 finding 2): the index
 * over every user's words is replaced by one over vault_items.search_words, the owner-tagged
 * words of title, text and url, which the service writes with every change of those; every
 * existing item is written to it.
 * - SQLite: a contentless FTS5 table kept by triggers from search_words (which they then empty:
 *   the words live in the index only), under each item's search_rowid.
 * - MySQL: a FULLTEXT index on search_words (default parser: the tag must stay one token with its word).
 */
export class OwnerSearchIndex1795900000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    await queryRunner.query(`ALTER TABLE vault_items ADD COLUMN search_words ${sqlite ? 'TEXT' : 'LONGTEXT'} NULL`);
    if (sqlite) {
      for (const t of ['insert', 'update', 'delete']) await queryRunner.query(`DROP TRIGGER vault_items_fts_${t}`);
      await queryRunner.query('DROP TABLE vault_items_fts');
      await queryRunner.query(
        `CREATE VIRTUAL TABLE vault_items_fts USING fts5(words, content = '', contentless_delete = 1, prefix = '${OWNER_TAG_LENGTH + 1} ${OWNER_TAG_LENGTH + 2}', tokenize = 'unicode61 remove_diacritics 2')`,
      );
      // recursive_triggers is off: the UPDATE inside a trigger fires the update trigger, whose
      // WHEN (words given) keeps it from indexing the emptied column.
      await queryRunner.query(`CREATE TRIGGER vault_items_fts_insert AFTER INSERT ON vault_items BEGIN
        INSERT INTO vault_items_fts (words) VALUES (COALESCE(new.search_words, ''));
        UPDATE vault_items SET search_rowid = last_insert_rowid(), search_words = NULL WHERE id = new.id;
      END`);
      await queryRunner.query(`CREATE TRIGGER vault_items_fts_update AFTER UPDATE OF search_words ON vault_items
        WHEN new.search_words IS NOT NULL BEGIN
        UPDATE vault_items_fts SET words = new.search_words WHERE rowid = new.search_rowid;
        UPDATE vault_items SET search_words = NULL WHERE id = new.id;
      END`);
      await queryRunner.query(`CREATE TRIGGER vault_items_fts_delete AFTER DELETE ON vault_items BEGIN
        DELETE FROM vault_items_fts WHERE rowid = old.search_rowid;
      END`);
    } else {
      await queryRunner.query('ALTER TABLE vault_items DROP INDEX vault_items_search');
    }
    // The backfill: each item's words through the column (SQLite: its trigger indexes them).
    for (let after = ''; ;) {
      const rows = (await queryRunner.query(
        'SELECT id, owner_id, title, text, url FROM vault_items WHERE id > ? ORDER BY id LIMIT ?',
        [after, BATCH],
      )) as { id: string; owner_id: string; title: string | null; text: string | null; url: string | null }[];
      if (!rows.length) break;
      for (const r of rows) {
        const words = ownerWords(r.owner_id, r.title, r.text, r.url);
        if (sqlite)
          await queryRunner.query(
            'INSERT INTO vault_items_fts (rowid, words) SELECT search_rowid, ? FROM vault_items WHERE id = ? AND search_rowid IS NOT NULL',
            [words, r.id],
          );
        else await queryRunner.query('UPDATE vault_items SET search_words = ? WHERE id = ?', [words, r.id]);
      }
      after = rows[rows.length - 1].id;
    }
    if (!sqlite)
      await queryRunner.query('ALTER TABLE vault_items ADD FULLTEXT INDEX vault_items_search_words (search_words)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    if (sqlite) {
      for (const t of ['insert', 'update', 'delete']) await queryRunner.query(`DROP TRIGGER vault_items_fts_${t}`);
      await queryRunner.query('DROP TABLE vault_items_fts');
      await queryRunner.query(
        `CREATE VIRTUAL TABLE vault_items_fts USING fts5(title, text, url, tokenize = 'unicode61 remove_diacritics 2')`,
      );
      await queryRunner.query(
        'INSERT INTO vault_items_fts (rowid, title, text, url) SELECT search_rowid, title, text, url FROM vault_items WHERE search_rowid IS NOT NULL',
      );
      await queryRunner.query(`CREATE TRIGGER vault_items_fts_insert AFTER INSERT ON vault_items BEGIN
        INSERT INTO vault_items_fts (title, text, url) VALUES (new.title, new.text, new.url);
        UPDATE vault_items SET search_rowid = last_insert_rowid() WHERE id = new.id;
      END`);
      await queryRunner.query(`CREATE TRIGGER vault_items_fts_update AFTER UPDATE OF title, text, url ON vault_items BEGIN
        UPDATE vault_items_fts SET title = new.title, text = new.text, url = new.url WHERE rowid = new.search_rowid;
      END`);
      await queryRunner.query(`CREATE TRIGGER vault_items_fts_delete AFTER DELETE ON vault_items BEGIN
        DELETE FROM vault_items_fts WHERE rowid = old.search_rowid;
      END`);
    } else {
      await queryRunner.query('ALTER TABLE vault_items DROP INDEX vault_items_search_words');
      await queryRunner.query('ALTER TABLE vault_items ADD FULLTEXT INDEX vault_items_search (title, text, url)');
    }
    await queryRunner.query('ALTER TABLE vault_items DROP COLUMN search_words');
  }
}
