import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { columns } from '../../../lib/database/portable';

/** Per-user synthesis cap and round-robin claiming (see entities/synthesis-owner.ts). */
export class CreateSynthesisOwners1737200000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'synthesis_owners',
        columns: [
          c.uuid('owner_id', { isPrimary: true }),
          c.timestamp('last_claimed_at', { isNullable: true }),
          c.timestamp('last_queued_at', { isNullable: true }),
        ],
      }),
    );
    // Claiming groups the queued jobs by owner; requests count an owner's queued and running jobs.
    await queryRunner.createIndex(
      'syntheses',
      new TableIndex({ name: 'IDX_syntheses_state_owner', columnNames: ['state', 'owner_id', 'id'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('syntheses', 'IDX_syntheses_state_owner');
    await queryRunner.dropTable('synthesis_owners');
  }
}
