import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';
import { columns } from '../../../lib/database/portable';

/** The sample rate a synthesis was asked for (24 kHz for the OpenAI-compatible endpoint); null: the engine's own. */
export class AddSynthesisSampleRate1737600000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'syntheses',
      new TableColumn(columns(queryRunner).int('sample_rate', { isNullable: true })),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('syntheses', 'sample_rate');
  }
}
