import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createEventConsumersTable, EVENT_CONSUMERS_TABLE } from '../../../lib/event-consumer';
import { createOutboxTable } from '../../../lib/outbox';

// columns() keeps one migration portable between SQLite and MySQL.
export class CreateNoteTables1795662977244 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    const flag = (name: string) => ({ name, type: 'boolean', default: false });
    await queryRunner.createTable(
      new Table({
        name: 'notes',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('title', 200),
          c.key('title_key', 200),
          c.text('body'),
          c.string('excerpt', 300),
          c.uuid('folder_id', { isNullable: true }),
          c.text('tags'),
          c.text('given_tags'),
          flag('pinned'),
          flag('archived'),
          c.timestamp('archived_at', { isNullable: true }),
          c.int('version'),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
          c.int('search_id', { isNullable: true }),
        ],
        indices: [
          // The listing's order within the archive filter: pinned first, newest change first.
          { columnNames: ['owner_id', 'archived', 'pinned', 'updated_at', 'id'] },
          // Backlinks find a note's title among the owner's links; wiki links resolve titles.
          { columnNames: ['owner_id', 'title_key'] },
          { columnNames: ['owner_id', 'folder_id'] },
          // A search hit's note (SQLite: by its FTS rowid), with what the search filters on: the
          // hits are checked without reading the notes' rows (bodies and all).
          { columnNames: ['search_id', 'owner_id', 'archived', 'id'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'note_tags',
        columns: [c.uuid('note_id', { isPrimary: true }), c.key('tag', 50, { isPrimary: true }), c.uuid('owner_id')],
        indices: [{ columnNames: ['owner_id', 'tag'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'note_links',
        columns: [
          c.uuid('source_id', { isPrimary: true }),
          c.key('target_key', 202, { isPrimary: true }),
          c.uuid('owner_id'),
        ],
        indices: [{ columnNames: ['owner_id', 'target_key'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'note_folders',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('name', 100),
          c.key('name_key', 100),
          c.uuid('parent_id', { isNullable: true }),
          c.string('parent_key', 36),
          c.int('version'),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
        ],
        indices: [{ columnNames: ['owner_id', 'parent_key', 'name_key'], isUnique: true }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'note_owners',
        columns: [c.uuid('owner_id', { isPrimary: true }), c.int('note_count'), c.int('folder_count')],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'note_jobs',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('kind', 20),
          c.text('params'),
          c.timestamp('created_at'),
        ],
      }),
    );
    // The first search index, over every user (replaced by OwnerSearchIndex1795900000000).
    if (queryRunner.connection.options.type === 'better-sqlite3')
      await queryRunner.query(
        `CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')`,
      );
    else await queryRunner.query('ALTER TABLE notes ADD FULLTEXT INDEX notes_fulltext (title, body)');
    // Events are written here, in the same transaction as the change, then relayed to the stream.
    await createOutboxTable(queryRunner);
    // Where this subgraph is in the event log (the user.deleted cascade).
    await createEventConsumersTable(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable(EVENT_CONSUMERS_TABLE);
    await queryRunner.dropTable('outbox');
    // MySQL's FULLTEXT index goes with its table.
    if (queryRunner.connection.options.type === 'better-sqlite3') await queryRunner.query('DROP TABLE notes_fts');
    for (const table of ['note_jobs', 'note_owners', 'note_folders', 'note_links', 'note_tags', 'notes'])
      await queryRunner.dropTable(table);
  }
}
