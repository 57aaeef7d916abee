// The span: one recorded span of a sampled trace, written by hand (OpenTelemetry's ReadableSpan,
// handed to the exporter when it ends), and how work runs in one within the current scope.
import type { Attributes, HrTime, Link, SpanContext, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { requestScope, type RequestScope } from '../request-context';
import { tracer } from './exporter';
import { newSpanId, newTraceId } from './ids';
import { TraceScope } from './propagation';

/** Span kinds as OpenTelemetry numbers them (@opentelemetry/api SpanKind). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2 } as const;
export type Kind = (typeof SpanKind)[keyof typeof SpanKind];

// Span times in performance.now() milliseconds (doubles: BigInt arithmetic was most of the cost of
// making a span), as OpenTelemetry's [seconds, nanoseconds] since the epoch when they end.
const PERF_EPOCH_MS = performance.timeOrigin;
const HR_AT_START = process.hrtime.bigint();
const PERF_AT_START = performance.now();
/** A process.hrtime.bigint() reading (an operation's start) on performance.now()'s scale. */
const perfMs = (hr: bigint): number => PERF_AT_START + Number(hr - HR_AT_START) / 1e6;
const hrTime = (ms: number): HrTime => {
  const epochMs = PERF_EPOCH_MS + ms;
  const seconds = Math.floor(epochMs / 1000);
  return [seconds, Math.round((epochMs - seconds * 1000) * 1e6)];
};

const SCOPE = { name: 'federated-auth-voice' };
// Spans record no events, and only a job's has links: one shared empty list each (never written).
const NO_EVENTS: [] = [];
const NO_LINKS: Link[] = [];

/**
 * One recorded span of a sampled trace, exported as OpenTelemetry's ReadableSpan when it ends.
 * Made only for sampled work, with its ids, its times and what it says: nothing is made per
 * unsampled request.
 */
export class Span implements ReadableSpan {
  readonly scope: TraceScope;
  readonly parentSpanContext: SpanContext | undefined;
  readonly attributes: Attributes;
  readonly links: Link[];
  readonly events = NO_EVENTS;
  readonly resource = tracer.active!.resource;
  readonly instrumentationScope = SCOPE;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  status: SpanStatus = { code: 0 };
  startTime: HrTime;
  endTime: HrTime = [0, 0];
  ended = false;
  private readonly started: number;
  private context: SpanContext | undefined;
  private finished = 0;

  constructor(
    public name: string,
    readonly kind: Kind,
    parent: { traceId: string; spanId: string } | undefined,
    attributes: Attributes = {},
    options: { start?: bigint; traceId?: string; links?: Link[]; remoteParent?: boolean } = {},
  ) {
    this.scope = new TraceScope(parent?.traceId ?? options.traceId ?? newTraceId(), newSpanId(), true);
    this.parentSpanContext = parent && {
      traceId: parent.traceId,
      spanId: parent.spanId,
      traceFlags: 1,
      isRemote: options.remoteParent ?? false,
    };
    this.attributes = attributes;
    this.links = options.links ?? NO_LINKS;
    this.started = options.start === undefined ? performance.now() : perfMs(options.start);
    this.startTime = hrTime(this.started);
  }

  spanContext(): SpanContext {
    return (this.context ??= { traceId: this.scope.traceId, spanId: this.scope.spanId, traceFlags: 1 });
  }

  get duration(): HrTime {
    const ms = Math.max(0, this.finished - this.started);
    const seconds = Math.floor(ms / 1000);
    return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
  }

  /** Marks the span failed (OpenTelemetry's ERROR status), with what went wrong. */
  fail(message: string | undefined, err?: unknown): void {
    this.status = message === undefined ? { code: 2 } : { code: 2, message: message.slice(0, 500) };
    if (err instanceof Error) this.attributes['error.type'] = err.name === 'Error' ? err.constructor.name : err.name;
  }

  /** Ends the span (once) and hands it to the exporter. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.finished = performance.now();
    this.endTime = hrTime(this.finished);
    tracer.active?.processor.onEnd(this);
  }
}

/** The trace scope of the work running now, if tracing is on and it belongs to one. */
export const currentScope = (): RequestScope | undefined => (tracer.active ? requestScope.getStore() : undefined);

/** Whether the work running now is in a sampled trace: test it before building a span's attributes. */
export const recording = (): boolean => currentScope()?.sampled === true;

/**
 * A span for work done now within the current scope, or undefined when there is nothing to
 * record (tracing off, no scope, or a trace not sampled). Run its children in `span.scope`.
 */
export function startSpan(name: string, kind: Kind, attributes?: Attributes, start?: bigint): Span | undefined {
  const scope = currentScope();
  return scope?.sampled ? new Span(name, kind, scope, attributes, { start }) : undefined;
}

/** Runs `work` in `span`'s scope and ends the span: its status says whether `work` threw. */
export async function runInSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await requestScope.run(span.scope, work);
  } catch (err) {
    span.fail((err as Error)?.message, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Runs `work` in a span of the current trace (when it is sampled): its status says whether `work` threw. */
export async function inSpan<T>(
  name: string,
  kind: Kind,
  attributes: Attributes | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const span = startSpan(name, kind, attributes);
  return span ? runInSpan(span, work) : work();
}
