import { MigrationInterface, QueryRunner } from 'typeorm';
import { createUserCapsTable } from '../../../lib/kit/user-caps';

/** API_KEYS_PER_USER and ROLES_MAX on the kit's counters (lib/kit/user-caps.ts), counted from the rows kept now. */
export class AuthUserCaps1796000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createUserCapsTable(queryRunner, {
      API_KEYS_PER_USER:
        'SELECT user_id AS owner_id, COUNT(*) AS used FROM api_keys WHERE revoked_at IS NULL GROUP BY user_id',
      // Custom roles count for everyone (lib/kit/user-caps.ts EVERYONE).
      ROLES_MAX: "SELECT '*' AS owner_id, COUNT(*) AS used FROM roles",
    });
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('user_caps');
  }
}
