import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createEventConsumersTable } from '../../../lib/event-consumer';
import { createOutboxTable } from '../../../lib/outbox';

/**
 * The Vault's tables. Full-text search uses each database's own index: an FTS5 table kept by
 * triggers on SQLite (unicode61, diacritics removed), an InnoDB FULLTEXT index on MySQL/MariaDB
 * (with the ngram parser where the server has it).
 */
export class CreateVaultTables1795663134211 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    const mysql = queryRunner.connection.options.type === 'mysql';
    await queryRunner.createTable(
      new Table({
        name: 'vault_items',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('kind', 8),
          c.string('url', 2048, { isNullable: true }),
          c.string('url_key', 64, { isNullable: true }),
          c.string('title', 500, { isNullable: true }),
          c.text('text', { isNullable: true }),
          c.string('excerpt', 300, { isNullable: true }),
          c.string('description', 1000, { isNullable: true }),
          c.string('language', 35, { isNullable: true }),
          c.string('site_name', 200, { isNullable: true }),
          c.string('media_type', 255, { isNullable: true }),
          { name: 'size_bytes', type: 'bigint', isNullable: true },
          c.string('sha256', 64, { isNullable: true }),
          c.string('file_name', 255, { isNullable: true }),
          c.string('blob_key', 100, { isNullable: true }),
          c.string('state', 10),
          c.string('error', 100, { isNullable: true }),
          c.string('category', 100, { isNullable: true }),
          c.text('tags'),
          c.string('classified_by', 8, { isNullable: true }),
          c.uuid('classified_rule_id', { isNullable: true }),
          c.double('classified_confidence', { isNullable: true }),
          c.int('favorite'),
          c.int('archived'),
          c.int('version'),
          c.timestamp('captured_at'),
          c.timestamp('updated_at'),
          c.int('attempts'),
          c.string('worker_id', 100, { isNullable: true }),
          c.timestamp('lease_until', { isNullable: true }),
          c.int('train_pending'),
          c.string('trained_category', 100, { isNullable: true }),
          c.uuid('source_hub_id', { isNullable: true }),
          c.uuid('source_node_id', { isNullable: true }),
          // SQLite: the row of its FTS5 entry (the trigger below sets it).
          ...(mysql ? [] : [{ name: 'search_rowid', type: 'integer', isNullable: true }]),
        ],
        indices: [
          // The owner's items newest first, and each filter beside the owner.
          { columnNames: ['owner_id', 'id'] },
          { columnNames: ['owner_id', 'state', 'id'] },
          { columnNames: ['owner_id', 'category', 'id'] },
          // Duplicates: one normalised URL, one file content per user (NULLs never collide).
          { columnNames: ['owner_id', 'url_key'], isUnique: true },
          { columnNames: ['owner_id', 'sha256'], isUnique: true },
          // The hubs quick-add saga: one item per source node, however often the request comes.
          { columnNames: ['source_node_id'], isUnique: true },
          // The enrichment queue and the trainer.
          { columnNames: ['state', 'lease_until'] },
          { columnNames: ['train_pending', 'owner_id'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'vault_item_tags',
        columns: [
          c.uuid('item_id', { isPrimary: true }),
          c.string('name', 50, { isPrimary: true }),
          c.uuid('owner_id'),
        ],
        indices: [{ columnNames: ['owner_id', 'name'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'vault_rules',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('name', 100),
          c.int('priority'),
          c.text('when_json'),
          c.text('then_json'),
          c.int('version'),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
        ],
        indices: [{ columnNames: ['owner_id', 'priority', 'id'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'vault_classifiers',
        columns: [
          c.uuid('owner_id', { isPrimary: true }),
          { name: 'model', type: mysql ? 'longtext' : 'text' },
          c.text('label_counts'),
          c.int('version'),
          c.timestamp('updated_at'),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'vault_user_deletions',
        columns: [c.uuid('owner_id', { isPrimary: true }), c.timestamp('requested_at')],
      }),
    );
    if (mysql) {
      // ngram indexes CJK text too; MariaDB has no ngram parser, so its default parser is used.
      try {
        await queryRunner.query(
          'ALTER TABLE vault_items ADD FULLTEXT INDEX vault_items_search (title, text, url) WITH PARSER ngram',
        );
      } catch {
        await queryRunner.query('ALTER TABLE vault_items ADD FULLTEXT INDEX vault_items_search (title, text, url)');
      }
    } else {
      await queryRunner.query(
        `CREATE VIRTUAL TABLE vault_items_fts USING fts5(title, text, url, tokenize = 'unicode61 remove_diacritics 2')`,
      );
      // Search starts from the FTS matches and finds their items by this index.
      await queryRunner.query('CREATE UNIQUE INDEX vault_items_search_rowid ON vault_items (search_rowid)');
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
    }
    await createOutboxTable(queryRunner);
    await createEventConsumersTable(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'mysql') await queryRunner.query('DROP TABLE vault_items_fts');
    for (const table of [
      'event_consumers',
      'outbox',
      'vault_user_deletions',
      'vault_classifiers',
      'vault_rules',
      'vault_item_tags',
      'vault_items',
    ])
      await queryRunner.dropTable(table);
  }
}
