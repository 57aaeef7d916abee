// OpenTelemetry tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Each entry point in
// bin/ imports this module first, so that the instrumentations hook http, express, graphql,
// mysql2, undici (fetch, and the hops between processes) and pino before anything loads them.
// W3C `traceparent` then crosses every hop: the facade's request to the gateway, the gateway's
// subgraph fetches, each subgraph's server and its SQL, and the synthesis job (linked to the
// request that queued it). Log lines written inside a
// span carry its trace_id and span_id. Off, the API below is OpenTelemetry's no-op: nothing is
// loaded, recorded or sent.
import path from 'node:path';
import { context, propagation, trace, type Link } from '@opentelemetry/api';
import { loadConfig } from './config';

let provider: { shutdown(): Promise<void> } | undefined;

/** `gateway`, `facade`, `subgraph-tts`, `worker`, `all-in-one`: from the entry point's file and argument. */
function serviceName(): string {
  const entry = path.basename(process.argv[1] ?? 'service', '.js').replace(/^server$/, 'all-in-one'); // bench/server.js
  return entry === 'subgraph' && process.argv[2] ? `subgraph-${process.argv[2]}` : entry;
}

function startTracing(endpoint: string): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation, ExpressLayerType } = require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { GraphQLInstrumentation } = require('@opentelemetry/instrumentation-graphql') as typeof import('@opentelemetry/instrumentation-graphql');
  const { MySQL2Instrumentation } = require('@opentelemetry/instrumentation-mysql2') as typeof import('@opentelemetry/instrumentation-mysql2');
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { PinoInstrumentation } = require('@opentelemetry/instrumentation-pino') as typeof import('@opentelemetry/instrumentation-pino');

  const tracerProvider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName() }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` }))],
  });
  tracerProvider.register(); // AsyncLocalStorage context and the W3C propagator
  registerInstrumentations({
    tracerProvider,
    instrumentations: [
      // Health checks and scrapes would drown the traces that matter.
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => /^\/(health|metrics)/.test(req.url ?? '') || /\/health\//.test(req.url ?? '') }),
      // Route handlers only: a span per middleware (request id, body parser, …) is noise.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      // Resolver spans only where they do work: trivial field reads would be thousands of spans.
      new GraphQLInstrumentation({ ignoreTrivialResolveSpans: true, mergeItems: true }),
      new MySQL2Instrumentation(),
      new UndiciInstrumentation(),
      new PinoInstrumentation({ logKeys: { traceId: 'trace_id', spanId: 'span_id', traceFlags: 'trace_flags' } }),
    ],
  });
  provider = tracerProvider;
}

try {
  const endpoint = loadConfig().OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint) startTracing(endpoint);
} catch {
  // A bad configuration is reported by the entry point (lib/http-server.ts), once.
}

/** Sends the spans still buffered: called once on shutdown. */
export async function stopTracing(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
}

/** The current trace as a `traceparent` value, to store with work done later (a synthesis job). */
export function currentTraceParent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

const tracer = trace.getTracer('federated-auth-voice');

/**
 * Runs `work` in a span of its own trace, linked to the trace stored by currentTraceParent():
 * a job runs long after the request that queued it, so it is a new trace, not a child.
 */
export function inLinkedSpan<T>(name: string, traceParent: string | null | undefined, attributes: Record<string, string | number>, work: () => Promise<T>): Promise<T> {
  const links: Link[] = [];
  if (traceParent) {
    const linked = trace.getSpanContext(propagation.extract(context.active(), { traceparent: traceParent }));
    if (linked) links.push({ context: linked });
  }
  return tracer.startActiveSpan(name, { root: true, links, attributes }, async (span) => {
    try {
      return await work();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: 2 });
      throw err;
    } finally {
      span.end();
    }
  });
}
