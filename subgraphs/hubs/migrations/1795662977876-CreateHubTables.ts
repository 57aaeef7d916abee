import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { createEventConsumersTable } from '../../../lib/event-consumer';
import { columns } from '../../../lib/database/portable';
import { createOutboxTable } from '../../../lib/outbox';

// columns() keeps one migration portable between SQLite and MySQL.
export class CreateHubTables1795662977876 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    const int = (name: string, extra = {}) => c.int(name, extra);
    await queryRunner.createTable(
      new Table({
        name: 'hubs',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('name', 100),
          c.string('description', 1000, { default: "''" }),
          int('node_count', { default: 0 }),
          int('edge_count', { default: 0 }),
          int('text_bytes', { default: 0 }),
          int('version'),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
        ],
        // (owner_id, id): the owner's hubs page by page, in id (= creation) order.
        indices: [{ columnNames: ['owner_id', 'id'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'hub_nodes',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('hub_id'),
          c.string('type', 16),
          int('x'),
          int('y'),
          int('width'),
          int('height'),
          c.string('color', 7, { isNullable: true }),
          c.string('label', 200, { isNullable: true }),
          c.text('text', { isNullable: true }),
          c.string('url', 2048, { isNullable: true }),
          c.uuid('ref_id', { isNullable: true }),
          { name: 'missing', type: 'boolean', default: false },
          int('version'),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
        ],
        // (hub_id, id): a hub's nodes in order; ref_id: the nodes a deleted note/item/voice marks missing.
        indices: [{ columnNames: ['hub_id', 'id'] }, { columnNames: ['ref_id'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'hub_edges',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('hub_id'),
          c.uuid('from_node'),
          c.uuid('to_node'),
          c.string('from_side', 6, { isNullable: true }),
          c.string('to_side', 6, { isNullable: true }),
          c.string('from_end', 5, { isNullable: true }),
          c.string('to_end', 5, { isNullable: true }),
          c.string('label', 200, { isNullable: true }),
          c.string('color', 7, { isNullable: true }),
          c.timestamp('created_at'),
        ],
        // The neighbours' breadth-first search follows edges out of and into a set of nodes, level by level.
        indices: [{ columnNames: ['hub_id', 'from_node'] }, { columnNames: ['hub_id', 'to_node'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'hub_refs',
        columns: [c.uuid('id', { isPrimary: true }), c.string('kind', 16), c.uuid('owner_id')],
        indices: [{ columnNames: ['owner_id'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({ name: 'hub_owners', columns: [c.uuid('owner_id', { isPrimary: true }), int('hub_count')] }),
    );
    await queryRunner.createTable(
      new Table({ name: 'hub_deletions', columns: [c.uuid('hub_id', { isPrimary: true })] }),
    );
    // Events are written here, in the same transaction as the change, then relayed to the stream.
    await createOutboxTable(queryRunner);
    // The stored position of the refs projection in the event log (refs-projection.ts).
    await createEventConsumersTable(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'event_consumers',
      'outbox',
      'hub_deletions',
      'hub_owners',
      'hub_refs',
      'hub_edges',
      'hub_nodes',
      'hubs',
    ])
      await queryRunner.dropTable(table);
  }
}
