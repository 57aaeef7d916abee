import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createEventConsumersTable, EVENT_CONSUMERS_TABLE } from '../../../lib/event-consumer';
import { createJobTables, dropJobTables } from '../../../lib/kit/jobs';
import { createUserCapsTable } from '../../../lib/kit/user-caps';
import { createOutboxTable } from '../../../lib/outbox';

// columns() keeps one migration portable between SQLite and MySQL.
export class CreateTransferJobTables1795832786449 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'transfer_jobs',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('direction', 8),
          c.string('format', 16),
          c.string('state', 16),
          { name: 'uploaded', type: 'boolean' },
          { name: 'bytes', type: 'bigint' },
          c.int('pieces'),
          { name: 'cursor', type: 'bigint', isNullable: true },
          c.int('done'),
          c.int('total'),
          c.text('counts'),
          c.text('errors'),
          c.text('options', { isNullable: true }),
          c.uuid('active_owner', { isNullable: true }),
          c.uuid('target_folder_id', { isNullable: true }),
          c.text('principal'),
          c.timestamp('progress_at', { isNullable: true }),
          c.timestamp('created_at'),
          c.timestamp('finished_at', { isNullable: true }),
        ],
        // The owner's imports (or exports) page by page, in id (= creation) order.
        // One export per user at a time: active_owner is set while it is queued or running.
        indices: [{ columnNames: ['owner_id', 'direction', 'id'] }, { columnNames: ['active_owner'], isUnique: true }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'transfer_sources',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.uuid('job_id'),
          c.string('kind', 8),
          c.string('source_key', 64),
          c.text('path'),
          c.uuid('target_id'),
          c.timestamp('created_at'),
        ],
        indices: [{ columnNames: ['owner_id', 'kind', 'source_key'], isUnique: true }, { columnNames: ['job_id'] }],
      }),
    );
    await createOutboxTable(queryRunner);
    await createUserCapsTable(queryRunner, {});
    // A deleted user's jobs go (the kit's cascade), and imports run on the kit's queue.
    await createEventConsumersTable(queryRunner);
    await createJobTables(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropJobTables(queryRunner);
    await queryRunner.dropTable(EVENT_CONSUMERS_TABLE);
    await queryRunner.dropTable('user_caps');
    await queryRunner.dropTable('outbox');
    await queryRunner.dropTable('transfer_sources');
    await queryRunner.dropTable('transfer_jobs');
  }
}
