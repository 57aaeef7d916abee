import { MigrationInterface, QueryRunner } from 'typeorm';
import { createUserCapsTable } from '../../../lib/kit/user-caps';

/** WEBHOOKS_PER_USER on the kit's counters (lib/kit/user-caps.ts), counted from the webhooks kept now. */
export class IntegrationsUserCaps1796000000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createUserCapsTable(queryRunner, {
      WEBHOOKS_PER_USER: 'SELECT owner_id, COUNT(*) AS used FROM webhooks GROUP BY owner_id',
    });
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('user_caps');
  }
}
