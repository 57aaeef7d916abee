import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';

/** Everything but `admin:*`: what a user who was not an administrator could do before roles. */
const USER_SCOPES =
  'notes:read,notes:write,vault:read,vault:write,hubs:read,hubs:write,tts:read,tts:write,tts:synthesize,events:read,account:write';

/**
 * Custom roles (issue 30). Existing users keep what they had: a user with no role becomes `user`,
 * `admin` stays `admin`; any other role name a user held (the admin routes accepted any) becomes
 * a custom role with the scopes that name gave before, those of `user`.
 */
export class Roles1739000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'roles',
        columns: [
          c.string('name', 32, { isPrimary: true }),
          c.string('description', 200, { isNullable: true }),
          c.string('scopes', 1024),
          c.int('version', { default: 1 }),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
        ],
      }),
    );
    await queryRunner.query("UPDATE users SET roles = 'user' WHERE roles = ''");
    const rows = (await queryRunner.query('SELECT DISTINCT roles FROM users')) as { roles: string }[];
    const names = new Set(rows.flatMap((r) => r.roles.split(',')).filter((n) => n && n !== 'admin' && n !== 'user'));
    // A moment as each driver stores DATETIME: a Date for MySQL, TypeORM's UTC text for SQLite.
    const now = new Date();
    const at =
      queryRunner.connection.options.type === 'mysql' ? now : now.toISOString().replace('T', ' ').replace('Z', '');
    for (const name of names) {
      await queryRunner.query(
        'INSERT INTO roles (name, description, scopes, version, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)',
        [name.slice(0, 32), 'Made from a role name users held before roles existed.', USER_SCOPES, at, at],
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('roles');
  }
}
