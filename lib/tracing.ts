// Tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set, made by this service's own code
// rather than by OpenTelemetry's instrumentations (issue 36). Those wrapped every http request,
// Express layer, GraphQL resolver and log call, sampled or not, and with them a request cost
// 2.2× as much CPU at 10 % sampling. As Apollo Router and Hive Gateway do, the spans here come
// from the project's own request path:
// - the process edge (lib/http-app.ts, tracing/http.ts): reads `traceparent`, decides sampling once,
//   and opens the server span; the request then runs in its `RequestScope` (lib/request-context.ts,
//   one AsyncLocalStorage, entered only while tracing is on);
// - the operation pipeline (lib/operation-pipeline/tracing.ts): one span per GraphQL operation;
// - the hops (lib/http-client.ts, gateway/data-sources.ts): a client span per fetch, and
//   `traceparent` on every request to the next hop (lib/request-context.ts forwardedHeaders);
// - the database (lib/database/open.ts, tracing/database.ts): a span per statement, its text as
//   TypeORM sends it (placeholders, never the values);
// - the synthesis job (subgraphs/tts, tracing/jobs.ts): a trace of its own, linked to the request
//   that queued it.
// A request that is not sampled gets its scope (trace id, span id, flag) and nothing else: no
// span object, no timing, no export. Log lines written in a scope carry its trace_id and span_id
// (lib/logger.ts), sampled or not (the contract's "Limits").
//
// A caller's `traceparent` is kept (its trace id is passed on and logged, sampled or not), but
// its sampled flag is believed only from TRACE_TRUST_PARENT or a hop presenting the hop secret
// (tracing/trust.ts); from anyone else the process's own rule (OTEL_TRACES_SAMPLER, or TRACE_SAMPLE_RATIO)
// decides (tracing/sampling.ts), so that no caller can force or stop the export (issue 29). The entry
// point starts tracing (tracing/exporter.ts) with the settings lib/config.ts reads (`config.tracing`),
// naming the process's kind: nothing here reads the configuration itself.
//
// One file per concern in lib/tracing/: trust.ts, propagation.ts, sampling.ts, ids.ts, span.ts, http.ts,
// database.ts, jobs.ts, exporter.ts. This file is what the rest of the code imports.
export { startTracing, stopTracing, tracingEnabled, type TracingSettings, type TracingStart } from './tracing/exporter';
export { inStatementSpan, traceStatements } from './tracing/database';
export { serveTraced } from './tracing/http';
export { currentTraceParent, inLinkedSpan } from './tracing/jobs';
export { parseTraceParent, TraceScope, type TraceParent } from './tracing/propagation';
export { sampledFor } from './tracing/sampling';
export { currentScope, inSpan, recording, Span, SpanKind, startSpan } from './tracing/span';
export { traceParentTrust, trustedCallers, TRUSTED_PARENT_ATTRIBUTE, type HopSecretCheck } from './tracing/trust';
