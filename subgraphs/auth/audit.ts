// Audit events: written to the event log (through the outbox, with the change that caused them;
// administrators follow them with `scope=all`) and, once committed, to the process log with the
// username, so that an operator reading the log alone can tell who.
import type { DataSource, EntityManager } from 'typeorm';
import { inTransaction } from '../../lib/database/transactions';
import type { Logger } from '../../lib/logger';
import { publish, type EventType } from '../../lib/kit/typed-events';
import { authEvents } from './events';

/** The declared audit event types (./events.ts), by name. */
const declared = new Map<string, EventType<Record<string, unknown>>>(
  (authEvents as unknown as readonly EventType<Record<string, unknown>>[]).map((e) => [e.type, e]),
);

export interface AuditEvent {
  /** One of the event types declared in ./events.ts. */
  type: string;
  /** Whose stream the event belongs to; '' when no user is known (a login as an unknown name). */
  userId: string;
  resourceId: string;
  username: string;
  data?: Record<string, unknown>;
}

export type Audit = (event: AuditEvent) => Promise<void>;

/** Runs `work` in a transaction; the audit events it records are logged once it has committed. */
export async function auditedTransaction<T>(
  dataSource: DataSource,
  logger: Logger,
  work: (m: EntityManager, audit: Audit) => Promise<T>,
): Promise<T> {
  let recorded: AuditEvent[] = [];
  const result = await inTransaction(dataSource, (m) => {
    recorded = []; // a retried transaction starts over
    return work(m, async (event) => {
      const type = declared.get(event.type);
      if (!type) throw new Error(`audit event ${event.type} is not declared in subgraphs/auth/events.ts`);
      await publish(m, type, {
        userId: event.userId,
        resourceId: event.resourceId,
        data: { ...event.data, username: event.username },
      });
      recorded.push(event);
    });
  });
  for (const e of recorded) {
    logger.info({ audit: e.type, username: e.username, userId: e.userId || undefined, ...e.data }, `audit: ${e.type}`);
  }
  return result;
}
