import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createUserCapsTable } from '../../../lib/kit/user-caps';

/** NOTES_PER_USER and NOTE_FOLDERS_PER_USER move from note_owners to the kit's counters (lib/kit/user-caps.ts). */
export class NotesUserCaps1796000000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createUserCapsTable(queryRunner, {
      NOTES_PER_USER: 'SELECT owner_id, note_count AS used FROM note_owners',
      NOTE_FOLDERS_PER_USER: 'SELECT owner_id, folder_count AS used FROM note_owners',
    });
    await queryRunner.dropTable('note_owners');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'note_owners',
        columns: [c.uuid('owner_id', { isPrimary: true }), c.int('note_count'), c.int('folder_count')],
      }),
    );
    await queryRunner.query(
      "INSERT INTO note_owners (owner_id, note_count, folder_count) SELECT owner_id, SUM(CASE WHEN cap = 'NOTES_PER_USER' THEN used ELSE 0 END), SUM(CASE WHEN cap = 'NOTE_FOLDERS_PER_USER' THEN used ELSE 0 END) FROM user_caps GROUP BY owner_id",
    );
    await queryRunner.dropTable('user_caps');
  }
}
