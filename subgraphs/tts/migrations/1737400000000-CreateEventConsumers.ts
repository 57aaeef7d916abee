import { MigrationInterface, QueryRunner } from 'typeorm';
import { createEventConsumersTable, EVENT_CONSUMERS_TABLE } from '../../../lib/event-consumer';

/** Where the tts subgraph keeps its position in the event log (the user.deleted cascade). */
export class CreateEventConsumers1737400000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await createEventConsumersTable(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable(EVENT_CONSUMERS_TABLE);
  }
}
