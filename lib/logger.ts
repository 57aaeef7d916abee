import pino, { Logger } from 'pino';
import type { Config } from './config';
import { requestScope } from './request-context';

export type { Logger };

/**
 * A log line written within a traced request carries its trace (sampled or not): the scope of
 * lib/request-context.ts, entered only while tracing is on.
 */
function traceFields(): Record<string, string> {
  const scope = requestScope.getStore();
  return scope ? { trace_id: scope.traceId, span_id: scope.spanId, trace_flags: scope.sampled ? '01' : '00' } : {};
}

/** Structured JSON logs; every request log line carries its request id (and its trace, tracing on). */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT'>>,
  name?: string,
): Logger {
  return pino({
    level: config.LOG_LEVEL,
    base: name ? { service: name } : undefined,
    mixin: config.OTEL_EXPORTER_OTLP_ENDPOINT ? traceFields : undefined,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'password', 'refresh_token', '*.password'],
  });
}
