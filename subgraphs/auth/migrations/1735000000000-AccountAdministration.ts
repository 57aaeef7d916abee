import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { columns } from '../../../lib/database/portable';

/** Disabled users, last login, user versions, session client details, and the admin lock row. */
export class AccountAdministration1735000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    // Plain ADD COLUMN on both drivers: TypeORM's SQLite addColumn rebuilds the table, which the
    // sessions → users foreign key would make a delicate operation.
    const mysql = queryRunner.connection.options.type === 'mysql';
    const datetime = mysql ? 'DATETIME(3)' : 'datetime';
    await queryRunner.query('ALTER TABLE users ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT 0');
    await queryRunner.query(`ALTER TABLE users ADD COLUMN last_login_at ${datetime} NULL`);
    await queryRunner.query('ALTER TABLE users ADD COLUMN version INTEGER NOT NULL DEFAULT 1');
    await queryRunner.query('ALTER TABLE sessions ADD COLUMN user_agent VARCHAR(512) NULL');
    await queryRunner.query('ALTER TABLE sessions ADD COLUMN ip_address VARCHAR(64) NULL');
    // A user's sessions, newest first.
    await queryRunner.createIndex('sessions', new TableIndex({ columnNames: ['user_id', 'created_at'] }));
    // One row that operations able to remove an administrator lock first, so that two of them
    // (admin A disables B while B disables A) cannot both pass the last-admin check.
    await queryRunner.createTable(
      new Table({ name: 'auth_locks', columns: [c.string('name', 32, { isPrimary: true })] }),
    );
    await queryRunner.query("INSERT INTO auth_locks (name) VALUES ('admins')");
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('auth_locks');
    for (const [table, column] of [
      ['sessions', 'ip_address'],
      ['sessions', 'user_agent'],
      ['users', 'version'],
      ['users', 'last_login_at'],
      ['users', 'disabled'],
    ]) {
      await queryRunner.dropColumn(table, column);
    }
  }
}
