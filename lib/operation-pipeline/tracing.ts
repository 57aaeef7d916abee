// Tracing's part of the pipeline: one span per operation (`query Session`), made by the pipeline
// itself instead of a span per resolver (issue 36). The span opens before the first step and
// runs the steps in its scope, so the fetches and statements of the operation are its children;
// it ends after the last after-step (the metric), with the outcome the client gets. Only in a
// sampled trace: otherwise the pipeline is run as it is, with nothing made.
import { requestScope } from '../request-context';
import { recording, Span, SpanKind, startSpan, tracingEnabled } from '../tracing';
import { outcomeOf } from './metrics';
import type { Operation, Pipeline } from './pipeline';

/** The open span of each operation in a sampled trace. */
const spans = new WeakMap<Operation<unknown, unknown>, Span>();

/**
 * Opens the operation's span and enters its scope for the rest of the calling request (Apollo
 * Server's path, where the pipeline does not run the execution: ../../gateway/apollo-adapter.ts).
 */
export function enterOperationSpan(op: Operation<unknown, unknown>): void {
  const span = openSpan(op);
  if (span) requestScope.enterWith(span.scope);
}

function openSpan(op: Operation<unknown, unknown>): Span | undefined {
  if (!recording()) return undefined;
  const span = startSpan('graphql', SpanKind.INTERNAL, {}, op.start)!;
  spans.set(op, span);
  return span;
}

function closeSpan(op: Operation<unknown, unknown>): void {
  const span = spans.get(op);
  if (!span) return;
  spans.delete(op);
  const type = op.operation?.operation;
  const name = op.operation?.name?.value;
  span.name = type ? `${type}${name ? ` ${name}` : ''}` : 'graphql';
  if (type) span.attributes['graphql.operation.type'] = type;
  if (name) span.attributes['graphql.operation.name'] = name;
  const outcome = outcomeOf(op);
  span.attributes['graphql.outcome'] = outcome;
  if (outcome !== 'ok') span.fail(String(op.answer.errors?.[0]?.message ?? outcome));
  span.end();
}

/** `inner`, with a span per operation while tracing is on. */
export function traced<Caller, Context>(inner: Pipeline<Caller, Context>): Pipeline<Caller, Context> {
  if (!tracingEnabled()) return inner;
  return {
    steps: inner.steps,
    run(op) {
      const span = openSpan(op);
      if (!span) return inner.run(op);
      return requestScope.run(span.scope, () => inner.run(op)).finally(() => closeSpan(op));
    },
    finish(op) {
      // An async after-step (an Idempotency-Key's record) ends the span when it is done.
      const finishing = inner.finish(op);
      if (finishing) return finishing.finally(() => closeSpan(op));
      closeSpan(op);
    },
  };
}
