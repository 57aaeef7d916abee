import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';

export class CreateSynthesesTable1734000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'syntheses',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('state', 16),
          c.uuid('voice_id', { isNullable: true }),
          c.string('base_voice', 64),
          c.string('voice_blend', 500, { isNullable: true }),
          c.string('language', 35),
          c.double('speed'),
          c.text('text'),
          c.int('characters'),
          c.int('duration_ms', { isNullable: true }),
          c.string('error', 500, { isNullable: true }),
          c.int('attempts'),
          c.string('worker_id', 100, { isNullable: true }),
          c.timestamp('lease_until', { isNullable: true }),
          c.string('audio_key', 200, { isNullable: true }),
          c.int('audio_bytes', { isNullable: true }),
          c.timestamp('created_at'),
          c.timestamp('started_at', { isNullable: true }),
          c.timestamp('finished_at', { isNullable: true }),
        ],
        indices: [
          { columnNames: ['owner_id', 'id'] },
          // Workers look for queued jobs and for running ones whose lease has ended.
          { columnNames: ['state', 'lease_until'] },
          // Retention deletes finished jobs by age.
          { columnNames: ['finished_at'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('syntheses');
  }
}
