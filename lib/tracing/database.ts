// Database instrumentation (lib/database/open.ts, lib/database/driver.ts): a span per statement
// in a sampled trace, its text as it is sent, with placeholders (the values are never in it, nor
// in the error status).
import type { DataSource, EntitySubscriberInterface } from 'typeorm';
import type { AfterQueryEvent, BeforeQueryEvent } from 'typeorm/subscriber/event/QueryEvent';
import { tracer } from './exporter';
import { recording, Span, SpanKind, startSpan } from './span';

/** A statement span's key: the parameters array TypeORM hands both its query events (one per query call). */
type StatementKey = object;

/** Each traced data source's name (`auth`, `tts`) and system, for its statements' spans. */
const tracedDatabases = new WeakMap<DataSource, { database: string; system: 'mysql' | 'sqlite' }>();

function statementSpan(database: string, system: string, sql: string): Span {
  const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY';
  return startSpan(`${operation} ${database}`, SpanKind.CLIENT, {
    'db.system.name': system,
    'db.namespace': database,
    'db.operation.name': operation,
    'db.query.text': sql.length > 2000 ? `${sql.slice(0, 2000)}…` : sql,
  })!;
}

/** A statement failed: the driver's error code only, as a driver's message may quote a value. */
function failStatement(span: Span, err: unknown): void {
  const code = (err as { code?: unknown } | undefined)?.code;
  span.fail(typeof code === 'string' ? code : 'the statement failed');
}

/**
 * Makes a span of each statement `dataSource` runs in a sampled trace. TypeORM's statements
 * through a subscriber; the project's own reads past TypeORM (lib/database/driver.ts) through
 * `inStatementSpan`.
 */
export function traceStatements(dataSource: DataSource, database: string): void {
  if (!tracer.active) return;
  const system = dataSource.options.type === 'mysql' ? 'mysql' : 'sqlite';
  tracedDatabases.set(dataSource, { database, system });
  const open = new WeakMap<StatementKey, Span>();
  const withoutParameters = new Map<string, Span[]>(); // statements run without a parameters array
  const subscriber: EntitySubscriberInterface = {
    beforeQuery(event: BeforeQueryEvent) {
      if (!recording()) return;
      const span = statementSpan(database, system, event.query);
      if (event.parameters && typeof event.parameters === 'object') open.set(event.parameters, span);
      else withoutParameters.set(event.query, [...(withoutParameters.get(event.query) ?? []), span]);
    },
    afterQuery(event: AfterQueryEvent) {
      let span: Span | undefined;
      if (event.parameters && typeof event.parameters === 'object') {
        span = open.get(event.parameters);
        open.delete(event.parameters);
      } else {
        const waiting = withoutParameters.get(event.query);
        span = waiting?.shift();
        if (waiting && !waiting.length) withoutParameters.delete(event.query);
      }
      if (!span) return;
      if (!event.success) failStatement(span, event.error);
      span.end();
    },
  };
  dataSource.subscribers.push(subscriber);
}

/** Runs one of the project's own statements (past TypeORM) in a span, when the trace is sampled. */
export function inStatementSpan<T>(dataSource: DataSource, sql: string, work: () => Promise<T>): Promise<T> {
  const traced = recording() ? tracedDatabases.get(dataSource) : undefined;
  if (!traced) return work();
  const span = statementSpan(traced.database, traced.system, sql);
  return work().then(
    (rows) => {
      span.end();
      return rows;
    },
    (err: unknown) => {
      failStatement(span, err);
      span.end();
      throw err;
    },
  );
}
