import { MigrationInterface, QueryRunner } from 'typeorm';
import { createUserCapsTable } from '../../../lib/kit/user-caps';

/** VOICES_PER_USER on the kit's counters (lib/kit/user-caps.ts), counted from the voices kept now. */
export class TtsUserCaps1796000000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createUserCapsTable(queryRunner, {
      VOICES_PER_USER: 'SELECT owner_id, COUNT(*) AS used FROM voices GROUP BY owner_id',
    });
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('user_caps');
  }
}
