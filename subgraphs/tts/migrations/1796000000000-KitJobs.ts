import { MigrationInterface, QueryRunner } from 'typeorm';
import { createJobTables, dropJobTables } from '../../../lib/kit/jobs';

/** The kit's job queue (lib/kit/jobs.ts): a deleted user's voices and syntheses go in batches. */
export class KitJobs1796000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createJobTables(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropJobTables(queryRunner);
  }
}
