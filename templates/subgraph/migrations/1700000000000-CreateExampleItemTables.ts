import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createEventConsumersTable, EVENT_CONSUMERS_TABLE } from '../../../lib/event-consumer';
import { createJobTables, dropJobTables } from '../../../lib/kit/jobs';
import { createUserCapsTable } from '../../../lib/kit/user-caps';
import { createOutboxTable } from '../../../lib/outbox';

// columns() keeps one migration portable between SQLite and MySQL.
export class CreateExampleItemTables1700000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'example_items',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('title', 200),
          c.int('version'),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
        ],
        // (owner_id, id): the owner's example items page by page, in id (= creation) order.
        indices: [{ columnNames: ['owner_id', 'id'] }],
      }),
    );
    // Events are written here, in the same transaction as the change, then relayed to the stream.
    await createOutboxTable(queryRunner);
    // The per-user caps' counters (lib/kit/user-caps.ts); nothing to count yet.
    await createUserCapsTable(queryRunner, {});
    // A deleted user's rows go (the kit's cascade): its position in the event log, and its jobs.
    await createEventConsumersTable(queryRunner);
    await createJobTables(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropJobTables(queryRunner);
    await queryRunner.dropTable(EVENT_CONSUMERS_TABLE);
    await queryRunner.dropTable('user_caps');
    await queryRunner.dropTable('outbox');
    await queryRunner.dropTable('example_items');
  }
}
