// HTTP instrumentation, at the edge of this process (lib/http-app.ts): a request's scope and,
// when sampled, its server span.
import type http from 'node:http';
import { tracer } from './exporter';
import { newSpanId, newTraceId } from './ids';
import { parseTraceParent, TraceScope } from './propagation';
import { sampledFor } from './sampling';
import { Span, SpanKind } from './span';
import { TRUSTED_PARENT_ATTRIBUTE } from './trust';

/**
 * The edge of this process, for one request: its scope (the caller's trace id kept, a new one
 * otherwise) and, when sampled, its server span, ended when the response closes with `route` (the
 * matched route template) and the status. Undefined when tracing is off.
 */
export function serveTraced<Req extends http.IncomingMessage>(
  req: Req,
  res: http.ServerResponse,
  route: (req: Req) => string,
): TraceScope | undefined {
  const active = tracer.active;
  if (!active) return undefined;
  const parent = parseTraceParent(req.headers.traceparent);
  const trusted = parent !== undefined && active.trustedCaller(req);
  const { ratio, parentBased } = active.sampler;
  if (!sampledFor(ratio, parent, trusted, parentBased))
    return new TraceScope(parent?.traceId ?? newTraceId(), newSpanId(), false);
  const method = req.method ?? 'GET';
  const span = new Span(
    method,
    SpanKind.SERVER,
    parent,
    { 'http.request.method': method, [TRUSTED_PARENT_ATTRIBUTE]: trusted },
    { remoteParent: true },
  );
  res.once('close', () => {
    // A listener that threw here would end the process: the span is ended whatever the label.
    let template = 'unmatched';
    try {
      template = route(req);
    } catch {
      // keep 'unmatched'
    }
    span.name = `${method} ${template}`;
    span.attributes['http.route'] = template;
    span.attributes['http.response.status_code'] = res.statusCode;
    // A server span fails on a 5xx (OpenTelemetry's HTTP conventions), or when the answer was cut off.
    if (res.statusCode >= 500) span.fail(undefined);
    else if (!res.writableFinished) span.fail('the response was not finished');
    span.end();
  });
  return span.scope;
}
