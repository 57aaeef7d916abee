// Prometheus metrics: one registry per process, served at GET /metrics (lib/http-app.ts) or on
// METRICS_PORT (lib/http-server.ts). Every label takes a bounded set of values: routes are
// templates, never raw paths, and no user or resource id is ever a label. Here are the metrics
// of the kit (HTTP, GraphQL, events, pools); a module declares its own in subgraphs/<name>/metrics.ts
// on this registry, listed in its definition (`metrics`).
import type http from 'node:http';
import client from 'prom-client';
import type { DataSource } from 'typeorm';
import { poolCounts } from './database/driver';

export const registry = new client.Registry();
// The event-loop delay is sampled every 100 ms, not prom-client's 10 ms: at 10 ms its timer alone
// woke an idle process 100 times a second (most of its idle CPU; docs/idle-cost.md). A stall
// still shows in the max and percentiles; only stalls much shorter than 100 ms may be missed.
client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequestDuration = new client.Histogram({
  name: 'http_server_request_duration_seconds',
  help: 'HTTP requests served, by method, route template and status class.',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: DURATION_BUCKETS,
  registers: [registry],
});

export const graphqlOperations = new client.Counter({
  name: 'graphql_operations_total',
  help: 'GraphQL operations executed, by operation name, type and outcome (ok or the first error code).',
  labelNames: ['operation', 'type', 'outcome'] as const,
  registers: [registry],
});

export const graphqlOperationDuration = new client.Histogram({
  name: 'graphql_operation_duration_seconds',
  help: 'GraphQL operation duration, by operation name, type and outcome.',
  labelNames: ['operation', 'type', 'outcome'] as const,
  buckets: DURATION_BUCKETS,
  registers: [registry],
});

export const subgraphRequestDuration = new client.Histogram({
  name: 'graphql_subgraph_request_duration_seconds',
  help: 'Fetches the gateway made to a subgraph, by subgraph and outcome.',
  labelNames: ['subgraph', 'outcome'] as const,
  buckets: DURATION_BUCKETS,
  registers: [registry],
});

export const backgroundJobBatches = new client.Counter({
  name: 'background_job_batches_total',
  help: "Batches of the kit's background jobs committed, by job kind (lib/kit/jobs.ts).",
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const eventRelayLag = new client.Histogram({
  name: 'event_relay_lag_seconds',
  help: "Time from an event's commit (in its subgraph's outbox) to its append to the event log.",
  labelNames: ['source'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const eventStreamConnections = new client.Gauge({
  name: 'event_stream_connections',
  help: 'Event streams open in this process (REST and GraphQL).',
  registers: [registry],
});

/**
 * Gauges read at scrape time (queue depth, pool use): each source registers a function and
 * removes it when it stops, so that a process running several (tests) reports the live ones.
 * A module declares its own in its metrics.ts.
 */
type Sample = { labels: Record<string, string>; value: number };
export function scrapedGauge(name: string, help: string, labelNames: string[]) {
  const sources = new Set<() => Promise<Sample[]> | Sample[]>();
  new client.Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      const all = await Promise.all(
        [...sources].map(async (read) => {
          try {
            return await read();
          } catch {
            return []; // a database that does not answer has no figure; readiness reports it
          }
        }),
      );
      for (const { labels, value } of all.flat()) this.set(labels, value);
    },
  });
  return (read: () => Promise<Sample[]> | Sample[]) => {
    sources.add(read);
    return () => void sources.delete(read);
  };
}

const addPoolInUseSource = scrapedGauge(
  'db_pool_connections_in_use',
  'Database connections taken from the pool, by database.',
  ['database'],
);
const addPoolWaitingSource = scrapedGauge(
  'db_pool_requests_waiting',
  'Queries waiting for a free pool connection, by database.',
  ['database'],
);

/** Reports a MySQL data source's pool (SQLite has one connection and no pool) until it is destroyed. */
export function watchPool(database: string, dataSource: DataSource): void {
  const reader = (value: (counts: { inUse: number; waiting: number }) => number) => {
    const read = () => {
      if (!dataSource.isInitialized) {
        remove();
        return [];
      }
      const counts = poolCounts(dataSource);
      return counts ? [{ labels: { database }, value: value(counts) }] : [];
    };
    return read;
  };
  const removals = [addPoolInUseSource(reader((c) => c.inUse)), addPoolWaitingSource(reader((c) => c.waiting))];
  const remove = () => removals.forEach((r) => r());
}

/**
 * Operation names come from callers: the first few hundred distinct ones are labels, later
 * ones count as `other`, so that a client inventing names cannot grow the series without end.
 */
const MAX_OPERATION_NAMES = 200;
const operationNames = new Set<string>();
export function operationLabel(name: string | null | undefined): string {
  if (!name) return 'anonymous';
  if (operationNames.has(name)) return name;
  if (operationNames.size >= MAX_OPERATION_NAMES || !/^[_A-Za-z]\w{0,63}$/.test(name)) return 'other';
  operationNames.add(name);
  return name;
}

/** Records one GraphQL operation. */
export function observeOperation(
  name: string | null | undefined,
  type: string | undefined,
  outcome: string,
  seconds: number,
): void {
  const labels = { operation: operationLabel(name), type: type ?? 'unknown', outcome };
  graphqlOperations.inc(labels);
  graphqlOperationDuration.observe(labels, seconds);
}

/** Seconds since a `process.hrtime.bigint()` reading. */
export const secondsSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** GET /metrics as a plain node:http handler (the METRICS_PORT server, and the apps). */
export function metricsHandler(_req: http.IncomingMessage, res: http.ServerResponse): void {
  metricsText().then(
    ({ contentType, body }) => {
      res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
      res.end(body);
    },
    () => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end('metrics unavailable\n');
    },
  );
}
