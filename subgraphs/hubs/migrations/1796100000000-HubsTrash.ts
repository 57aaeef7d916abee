import { MigrationInterface, QueryRunner } from 'typeorm';
import { addTrashColumn, dropTrashColumn } from '../../../lib/kit/trash';

/** The trash (lib/kit/trash.ts): a hub with `deleted_at` set is in the trash since then. */
export class HubsTrash1796100000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await addTrashColumn(queryRunner, 'hubs');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropTrashColumn(queryRunner, 'hubs');
  }
}
