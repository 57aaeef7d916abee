// W3C trace context: a caller's `traceparent` read, and the scope a piece of work runs in, written
// as the `traceparent` of the next hop or of a job run later.
import type { RequestScope } from '../request-context';
import { ZERO_SPAN, ZERO_TRACE } from './ids';

/** W3C trace-context version 00: trace id, parent span id, flags (lower-case hex, ids not all zero). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/** A `traceparent` header's trace, or undefined when there is none or it is malformed (a new trace then starts). */
export function parseTraceParent(value: string | string[] | undefined): TraceParent | undefined {
  const m = typeof value === 'string' ? TRACEPARENT.exec(value) : null;
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return undefined;
  return { traceId: m[1], spanId: m[2], sampled: (parseInt(m[3], 16) & 1) === 1 };
}

/** The trace a piece of work runs in: the request's, then each span's that has children. */
export class TraceScope implements RequestScope {
  constructor(
    readonly traceId: string,
    /** The span this work runs in: the parent of the spans it makes, and the caller id of the next hop. */
    readonly spanId: string,
    readonly sampled: boolean,
  ) {}

  /** This scope as a W3C `traceparent` value, for the next hop or a job run later. */
  get traceParent(): string {
    return `00-${this.traceId}-${this.spanId}-${this.sampled ? '01' : '00'}`;
  }
}
