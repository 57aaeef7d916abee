import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createUserCapsTable } from '../../../lib/kit/user-caps';

/** HUBS_PER_USER moves from hub_owners to the kit's counters (lib/kit/user-caps.ts). */
export class HubsUserCaps1796000000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createUserCapsTable(queryRunner, {
      HUBS_PER_USER: 'SELECT owner_id, hub_count AS used FROM hub_owners',
    });
    await queryRunner.dropTable('hub_owners');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({ name: 'hub_owners', columns: [c.uuid('owner_id', { isPrimary: true }), c.int('hub_count')] }),
    );
    await queryRunner.query(
      "INSERT INTO hub_owners (owner_id, hub_count) SELECT owner_id, used FROM user_caps WHERE cap = 'HUBS_PER_USER'",
    );
    await queryRunner.dropTable('user_caps');
  }
}
