import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';

export class ApiKeys1764100000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('user_id'),
          c.string('name', 100),
          c.string('prefix', 16),
          c.key('key_hash', 64),
          c.text('scopes'),
          c.timestamp('created_at'),
          c.timestamp('expires_at'),
          c.timestamp('last_used_at', { isNullable: true }),
          c.timestamp('revoked_at', { isNullable: true }),
        ],
        indices: [{ columnNames: ['user_id', 'id'] }, { columnNames: ['key_hash'], isUnique: true }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('api_keys');
  }
}
