import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';
import { columns } from '../../../lib/database/portable';

/** The W3C traceparent of the request that queued a job, so that the job's trace links to it. */
export class AddSynthesisTraceParent1737100000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'syntheses',
      new TableColumn(columns(queryRunner).string('trace_parent', 55, { isNullable: true })),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('syntheses', 'trace_parent');
  }
}
