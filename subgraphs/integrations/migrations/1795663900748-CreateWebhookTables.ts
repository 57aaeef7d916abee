import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createEventConsumersTable } from '../../../lib/event-consumer';
import { createOutboxTable } from '../../../lib/outbox';

// columns() keeps one migration portable between SQLite and MySQL.
export class CreateWebhookTables1795663900748 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    const bool = (name: string) => ({ name, type: 'boolean' });
    const bigint = (name: string) => ({ name, type: 'bigint' });
    await queryRunner.createTable(
      new Table({
        name: 'webhooks',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('owner_id'),
          c.string('url', 2048),
          c.text('event_types'),
          c.string('description', 500, { isNullable: true }),
          bool('enabled'),
          bool('all_users'),
          c.string('disabled_reason', 32, { isNullable: true }),
          c.int('version'),
          c.timestamp('created_at'),
          c.timestamp('updated_at'),
          c.string('secret', 100),
          c.string('previous_secret', 100, { isNullable: true }),
          c.timestamp('previous_secret_until', { isNullable: true }),
          c.timestamp('next_delivery_at', { isNullable: true }),
          c.uuid('lease_owner', { isNullable: true }),
          c.timestamp('lease_until'),
        ],
        // (owner_id, id): the owner's webhooks page by page; next_delivery_at: what workers look for.
        indices: [
          { columnNames: ['owner_id', 'id'] },
          { columnNames: ['next_delivery_at'] },
          { columnNames: ['all_users'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('webhook_id'),
          c.uuid('event_id'),
          c.string('event_type', 100),
          bigint('event_seq'),
          c.text('payload'),
          c.string('state', 16),
          c.int('attempts'),
          c.timestamp('next_attempt_at', { isNullable: true }),
          c.timestamp('occurred_at'),
          c.timestamp('created_at'),
        ],
        indices: [{ columnNames: ['webhook_id', 'state', 'event_seq'] }, { columnNames: ['created_at'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_attempts',
        columns: [
          c.uuid('id', { isPrimary: true }),
          c.uuid('webhook_id'),
          c.uuid('delivery_id'),
          c.uuid('event_id'),
          c.string('event_type', 100),
          c.int('attempt'),
          c.string('outcome', 32),
          c.int('status', { isNullable: true }),
          c.int('duration_ms'),
          c.string('error', 500, { isNullable: true }),
          c.timestamp('next_attempt_at', { isNullable: true }),
          c.timestamp('created_at'),
        ],
        indices: [{ columnNames: ['webhook_id', 'id'] }, { columnNames: ['created_at'] }],
      }),
    );
    // Events are written here, in the same transaction as the change, then relayed to the stream.
    await createOutboxTable(queryRunner);
    // This subgraph's position in the event log (the fan-out of events to webhooks).
    await createEventConsumersTable(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['event_consumers', 'outbox', 'webhook_attempts', 'webhook_deliveries', 'webhooks'])
      await queryRunner.dropTable(table);
  }
}
