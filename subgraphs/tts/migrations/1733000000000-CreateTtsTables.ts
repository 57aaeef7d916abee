import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createOutboxTable } from '../../../lib/outbox';

export class CreateTtsTables1733000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'voices',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('name', 100),
          c.key('name_key', 100),
          c.text('description', { isNullable: true }),
          c.string('base_voice', 64),
          c.string('voice_blend', 500, { isNullable: true }),
          c.string('language', 35),
          c.double('speed'),
          c.int('version'),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
        ],
        // (owner_id, id): the owner's voices page by page, in id (= creation) order.
        indices: [{ columnNames: ['owner_id', 'name_key'], isUnique: true }, { columnNames: ['owner_id', 'id'] }],
      }),
    );
    await createOutboxTable(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('outbox');
    await queryRunner.dropTable('voices');
  }
}
