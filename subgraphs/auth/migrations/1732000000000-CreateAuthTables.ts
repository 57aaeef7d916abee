import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createOutboxTable } from '../../../lib/outbox';

export class CreateAuthTables1732000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'users',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.string('username', 64),
          c.string('username_key', 64, { isUnique: true }),
          c.string('password_hash', 255),
          c.string('roles', 255),
          c.timestamp('created_at'),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'sessions',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('user_id'),
          c.string('state', 16),
          c.timestamp('created_at'),
          c.timestamp('expires_at'),
          c.timestamp('last_activity_at'),
          c.uuid('refresh_token_id'),
          c.timestamp('refresh_expires_at'),
          c.timestamp('revoked_at', { isNullable: true }),
        ],
        indices: [{ columnNames: ['user_id'] }],
        foreignKeys: [
          {
            columnNames: ['user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
    await createOutboxTable(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('outbox');
    await queryRunner.dropTable('sessions');
    await queryRunner.dropTable('users');
  }
}
