// OpenTelemetry tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Each entry point in
// bin/ imports this module first, so that the instrumentations hook http, express, graphql,
// mysql2, undici (fetch, and the hops between processes) and pino before anything loads them.
// W3C `traceparent` then crosses every hop: the facade's request to the gateway, the gateway's
// subgraph fetches, each subgraph's server and its SQL, and the synthesis job (linked to the
// request that queued it). Log lines written inside a
// span carry its trace_id and span_id. Off, the API below is OpenTelemetry's no-op: nothing is
// loaded, recorded or sent.
//
// A caller's `traceparent` is kept (its trace id is passed on and logged, sampled or not), but
// its sampled flag is believed only from TRACE_TRUST_PARENT; from anyone else the process's own
// rule (TRACE_SAMPLE_RATIO) decides, so that no caller can force or stop the export (issue 29).
import type http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import {
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Link,
  type SpanKind,
} from '@opentelemetry/api';
import type { Sampler, SamplingResult } from '@opentelemetry/sdk-trace-base';
import { type Config, loadConfig } from './config';

let provider: { shutdown(): Promise<void> } | undefined;

/** `gateway`, `facade`, `subgraph-tts`, `worker`, `all-in-one`: from the entry point's file and argument. */
function serviceName(): string {
  const entry = path.basename(process.argv[1] ?? 'service', '.js').replace(/^server$/, 'all-in-one'); // bench/server.js
  return entry === 'subgraph' && process.argv[2] ? `subgraph-${process.argv[2]}` : entry;
}

/** The span attribute that says whether the incoming request's caller may decide its sampling. */
export const TRUSTED_PARENT_ATTRIBUTE = 'trace.parent_trusted';

/** The names Express's trust-proxy setting knows, as subnets. */
const NAMED_SUBNETS: Record<string, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  linklocal: [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  uniquelocal: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
};

/** TRACE_TRUST_PARENT as a block list: `loopback`, `linklocal`, `uniquelocal`, addresses and CIDRs. Throws on anything else. */
export function trustedCallers(list: string[]): net.BlockList {
  const blocks = new net.BlockList();
  for (const entry of list) {
    const named = Object.hasOwn(NAMED_SUBNETS, entry) ? NAMED_SUBNETS[entry] : undefined;
    if (named) {
      for (const [address, prefix, type] of named) blocks.addSubnet(address, prefix, type);
      continue;
    }
    const [address, prefix] = entry.split('/');
    const version = net.isIP(address);
    const bits = prefix === undefined ? (version === 6 ? 128 : 32) : Number(prefix);
    if (!version || !Number.isInteger(bits) || bits < 0 || bits > (version === 6 ? 128 : 32))
      throw new Error(`"${entry}" is not an address, a CIDR or loopback/linklocal/uniquelocal`);
    blocks.addSubnet(address, bits, version === 6 ? 'ipv6' : 'ipv4');
  }
  return blocks;
}

/** Whether a request presents the hop secret (lib/hop.ts `HopSecret`). */
export interface HopSecretCheck {
  presentedBy(headers: http.IncomingHttpHeaders): boolean;
}

/**
 * Whether a request's caller is trusted with its sampled flag: one of TRACE_TRUST_PARENT, or a
 * hop of this service (it presents the hop secret, SUBGRAPH_SECRET), wherever it runs.
 */
export function traceParentTrust(list: string[], hop?: HopSecretCheck): (req: http.IncomingMessage) => boolean {
  const byAddress = traceParentTrustByAddress(list);
  return hop ? (req) => hop.presentedBy(req.headers) || byAddress(req) : byAddress;
}

function traceParentTrustByAddress(list: string[]): (req: http.IncomingMessage) => boolean {
  if (!list.length) return () => false;
  const blocks = trustedCallers(list);
  return (req) => {
    const address = req.socket?.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
    const version = address ? net.isIP(address) : 0;
    return version !== 0 && blocks.check(address!, version === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * The process's sampler: its own rule (a share of traces) for the traces it starts and for
 * callers it does not trust; a trusted caller's sampled flag, and a local parent's, are followed.
 */
export function callerSampler(ratio: number): Sampler {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { ParentBasedSampler, TraceIdRatioBasedSampler, SamplingDecision } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const followed = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  return {
    shouldSample(
      ctx: Context,
      traceId: string,
      name: string,
      kind: SpanKind,
      attributes: Attributes,
      links: Link[],
    ): SamplingResult {
      const parent = trace.getSpanContext(ctx);
      if (parent?.isRemote && attributes[TRUSTED_PARENT_ATTRIBUTE] !== true) {
        // The trace id is the caller's, so it cannot choose the draw: a random one, not the id's.
        return {
          decision:
            ratio >= 1 || Math.random() < ratio ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
        };
      }
      return followed.shouldSample(ctx, traceId, name, kind, attributes, links);
    },
    toString: () => `CallerSampler{ratio=${ratio}}`,
  };
}

function startTracing(endpoint: string, config: Config): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { NodeTracerProvider } =
    require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { registerInstrumentations } =
    require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation, ExpressLayerType } =
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { GraphQLInstrumentation } =
    require('@opentelemetry/instrumentation-graphql') as typeof import('@opentelemetry/instrumentation-graphql');
  const { MySQL2Instrumentation } =
    require('@opentelemetry/instrumentation-mysql2') as typeof import('@opentelemetry/instrumentation-mysql2');
  const { UndiciInstrumentation } =
    require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  const { PinoInstrumentation } =
    require('@opentelemetry/instrumentation-pino') as typeof import('@opentelemetry/instrumentation-pino');

  // Set once the instrumentations are registered: lib/hop loads express, which they must patch.
  let trusted: (req: http.IncomingMessage) => boolean = () => false;
  const tracerProvider = new NodeTracerProvider({
    sampler: callerSampler(config.TRACE_SAMPLE_RATIO),
    resource: resourceFromAttributes({ 'service.name': serviceName() }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` })),
    ],
  });
  tracerProvider.register(); // AsyncLocalStorage context and the W3C propagator
  registerInstrumentations({
    tracerProvider,
    instrumentations: [
      // Health checks and scrapes would drown the traces that matter.
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) =>
          /^\/(health|metrics)/.test(req.url ?? '') || /\/health\//.test(req.url ?? ''),
        // Read by callerSampler: the hook's attributes are there when the server span is sampled.
        startIncomingSpanHook: (req) => ({ [TRUSTED_PARENT_ATTRIBUTE]: trusted(req) }),
      }),
      // Route handlers only: a span per middleware (request id, body parser, …) is noise.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      // Resolver spans only where they do work: trivial field reads would be thousands of spans.
      new GraphQLInstrumentation({ ignoreTrivialResolveSpans: true, mergeItems: true }),
      new MySQL2Instrumentation(),
      new UndiciInstrumentation(),
      new PinoInstrumentation({ logKeys: { traceId: 'trace_id', spanId: 'span_id', traceFlags: 'trace_flags' } }),
    ],
  });
  const { HopSecret } = require('./hop') as typeof import('./hop');
  trusted = traceParentTrust(config.TRACE_TRUST_PARENT, new HopSecret(config.SUBGRAPH_SECRET));
  provider = tracerProvider;
}

try {
  const config = loadConfig();
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) startTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, config);
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
export function inLinkedSpan<T>(
  name: string,
  traceParent: string | null | undefined,
  attributes: Record<string, string | number>,
  work: () => Promise<T>,
): Promise<T> {
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
