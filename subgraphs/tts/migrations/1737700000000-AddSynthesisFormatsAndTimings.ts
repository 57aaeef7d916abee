import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';
import { columns } from '../../../lib/database/portable';

/**
 * The format a synthesis is encoded in while it renders (POST /v1/audio/speech's response_format,
 * when not wav or pcm), the bytes of its encodings cached beside the WAV (counted in the audio
 * quota), and its word timings (JSON, from the engine's word events).
 */
export class AddSynthesisFormatsAndTimings1737700000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.addColumns('syntheses', [
      new TableColumn(c.string('stream_format', 8, { isNullable: true })),
      new TableColumn(c.int('encoded_bytes', { isNullable: true })),
      new TableColumn(c.text('timings', { isNullable: true })),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of ['timings', 'encoded_bytes', 'stream_format']) await queryRunner.dropColumn('syntheses', name);
  }
}
