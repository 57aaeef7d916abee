// Tracing on or off for this process, and where its spans go: started once by the entry point
// (runService) with the settings it hands in (`config.tracing`, from OpenTelemetry's standard
// variables in lib/config.ts), before its databases open. Spans are exported over OTLP/HTTP
// (protobuf or JSON) by OpenTelemetry's BatchSpanProcessor and exporter.
import type http from 'node:http';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Resource } from '@opentelemetry/resources';
import { HopSecretCheck, traceParentTrust } from './trust';

/** How this process traces, from OpenTelemetry's standard variables (lib/config.ts); null: not at all. */
export interface TracingSettings {
  /** Where spans are sent, as the exporter is given it. */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  /** OTEL_RESOURCE_ATTRIBUTES, with OTEL_SERVICE_NAME as service.name when set. */
  resource: Record<string, string>;
  sampler: {
    /** A trusted caller's sampled flag decides (parentbased_*). */
    parentBased: boolean;
    /** The share of the traces this process decides about that it samples (always_on 1, always_off 0). */
    ratio: number;
  };
}

/** What a process that traces has: where ended spans go, what they say about it, and whom it believes. */
export interface ActiveTracing {
  processor: SpanProcessor;
  resource: Resource;
  sampler: TracingSettings['sampler'];
  /** Who may decide a request's sampling (trust.ts). */
  trustedCaller: (req: http.IncomingMessage) => boolean;
}

/** Set while tracing is on (read on every traced path: a property, not a call). */
export const tracer: { active?: ActiveTracing } = {};

/** Whether this process traces (startTracing was called with settings: an endpoint set, not disabled). */
export const tracingEnabled = (): boolean => tracer.active !== undefined;

export interface TracingStart {
  /** The process's kind (`gateway`, `facade`, `subgraph-tts`, `worker`, `all-in-one`): its service.name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES says otherwise. */
  service: string;
  /** TRACE_TRUST_PARENT: the callers whose sampled flag is believed. */
  trustParent: string[];
  /** Recognises this service's own hops, whose sampled flag is believed as TRACE_TRUST_PARENT's callers' is. */
  hop?: HopSecretCheck;
}

/**
 * Starts tracing with `settings` (nothing when null), once per process and before its databases
 * open.
 */
export function startTracing(settings: TracingSettings | null, start: TracingStart): void {
  if (!settings || tracer.active) return;
  /* eslint-disable @typescript-eslint/no-require-imports */
  // Loaded only when tracing is on: a process without it does not pay for the SDK's modules.
  const { BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { OTLPTraceExporter } = (
    settings.protocol === 'http/json'
      ? require('@opentelemetry/exporter-trace-otlp-http')
      : require('@opentelemetry/exporter-trace-otlp-proto')
  ) as typeof import('@opentelemetry/exporter-trace-otlp-http');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const trustedCaller = traceParentTrust(start.trustParent, start.hop);
  tracer.active = {
    // OTEL_BSP_* (the batch's size and delay) and OTEL_EXPORTER_OTLP_TIMEOUT are read by the SDK itself.
    processor: new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url, headers: settings.headers })),
    resource: resourceFromAttributes({ 'service.name': start.service, ...settings.resource }),
    sampler: settings.sampler,
    trustedCaller,
  };
}

/** Sends the spans still buffered: called once on shutdown. */
export async function stopTracing(): Promise<void> {
  await tracer.active?.processor.shutdown().catch(() => undefined);
}
