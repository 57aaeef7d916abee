import { MigrationInterface, QueryRunner } from 'typeorm';
import { createUserCapsTable } from '../../../lib/kit/user-caps';

/** The vault's caps on the kit's counters (lib/kit/user-caps.ts), counted from the rows kept now. */
export class VaultUserCaps1796000000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createUserCapsTable(queryRunner, {
      VAULT_ITEMS_PER_USER: 'SELECT owner_id, COUNT(*) AS used FROM vault_items GROUP BY owner_id',
      VAULT_FILE_BYTES_PER_USER:
        "SELECT owner_id, SUM(size_bytes) AS used FROM vault_items WHERE kind = 'file' AND size_bytes IS NOT NULL GROUP BY owner_id",
      VAULT_PENDING_PER_USER:
        "SELECT owner_id, COUNT(*) AS used FROM vault_items WHERE state = 'pending' GROUP BY owner_id",
      VAULT_RULES_PER_USER: 'SELECT owner_id, COUNT(*) AS used FROM vault_rules GROUP BY owner_id',
    });
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('user_caps');
  }
}
