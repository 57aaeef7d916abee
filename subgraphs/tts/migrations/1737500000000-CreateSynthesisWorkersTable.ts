import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';

/** Worker heartbeats, for readiness: how many synthesis workers are alive. */
export class CreateSynthesisWorkersTable1737500000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'synthesis_workers',
        columns: [
          c.string('id', 100, { isPrimary: true }),
          c.timestamp('heartbeat_at'),
          c.timestamp('started_at'),
          c.int('concurrency'),
        ],
        indices: [{ columnNames: ['heartbeat_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('synthesis_workers');
  }
}
