// The trace of work done later (a synthesis job): the request's trace stored with the job, and the
// job run in a trace of its own linked to it.
import { requestScope } from '../request-context';
import { tracer } from './exporter';
import { newSpanId, newTraceId } from './ids';
import { parseTraceParent, TraceScope } from './propagation';
import { sampledFor } from './sampling';
import { currentScope, runInSpan, Span, SpanKind } from './span';

/** The current trace as a `traceparent` value, to store with work done later (a synthesis job). */
export function currentTraceParent(): string | null {
  return currentScope()?.traceParent ?? null;
}

/**
 * Runs `work` in a span of its own trace, linked to the trace stored by currentTraceParent():
 * a job runs long after the request that queued it, so it is a new trace, not a child. Sampled
 * by the process's own rule.
 */
export async function inLinkedSpan<T>(
  name: string,
  traceParent: string | null | undefined,
  attributes: Record<string, string | number>,
  work: () => Promise<T>,
): Promise<T> {
  const active = tracer.active;
  if (!active) return work();
  if (!sampledFor(active.sampler.ratio, undefined, false))
    return requestScope.run(new TraceScope(newTraceId(), newSpanId(), false), work);
  const linked = parseTraceParent(traceParent ?? undefined);
  const span = new Span(name, SpanKind.INTERNAL, undefined, attributes, {
    links: linked
      ? [{ context: { traceId: linked.traceId, spanId: linked.spanId, traceFlags: linked.sampled ? 1 : 0 } }]
      : [],
  });
  return runInSpan(span, work);
}
