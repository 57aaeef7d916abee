import pino, { Logger } from 'pino';
import type { Config } from './config';

export type { Logger };

/** Structured JSON logs; every request log line carries its request id. */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name?: string): Logger {
  return pino({
    level: config.LOG_LEVEL,
    base: name ? { service: name } : undefined,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'password', 'refresh_token', '*.password'],
  });
}
