// The integrations module's settings (webhooks): its fragment of the configuration (lib/config.ts
// merges it; each `.describe()` is the setting's row in docs/configuration.md, written by
// `npm run docs:config`). Idempotency-Key's settings, which lib/idempotency.ts reads, stay in lib/config.ts.
import type { z } from 'zod';
import type { SettingKinds } from '../../lib/config';

export const integrationsSettings = ({ int, csv }: SettingKinds) => ({
  WEBHOOKS_PER_USER: int(1, 10_000)
    .default(20)
    .describe('webhooks one user may keep; one more is refused with 409 `conflict` (`details: { limit, max, count }`)'),
  WEBHOOK_CONCURRENCY: int(0, 10_000)
    .default(64)
    .describe(
      'webhook endpoints this process delivers to at once, one attempt in flight each (a slow endpoint holds only its own slot); `0`: none (leave delivery to other processes, e.g. `npm run start:worker -- integrations`)',
    ),
  WEBHOOK_TIMEOUT_SECONDS: int(1, 300)
    .default(10)
    .describe(
      'a delivery attempt without a complete answer within this is a `timeout` (connection, headers and the body read together)',
    ),
  WEBHOOK_MAX_RESPONSE_BYTES: int(0, 16 * 1024 ** 2)
    .default(64 * 1024)
    .describe("bytes of a receiver's answer read at most; the connection is then dropped")
    .meta({ shownDefault: '`65536` (64 KiB)' }),
  WEBHOOK_RETRY_SECONDS: int(1, 30 * 86_400)
    .default(3 * 86_400)
    .describe(
      'how long a delivery is retried; past it the delivery is given up and its webhook disabled with a `webhook.disabled` event',
    )
    .meta({ shownDefault: '`259200` (3 days)' }),
  WEBHOOK_RETRY_BASE_SECONDS: int(1, 3600)
    .default(5)
    .describe(
      "the first retry's delay; each next one doubles, with jitter over its upper half (5 s, 10 s, … minutes, then hours)",
    ),
  WEBHOOK_RETRY_MAX_DELAY_SECONDS: int(1, 86_400)
    .default(6 * 3600)
    .describe('the longest delay between two attempts of one delivery')
    .meta({ shownDefault: '`21600` (6 h)' }),
  WEBHOOK_LEASE_SECONDS: int(1, 3600)
    .default(30)
    .describe(
      'an endpoint whose delivering process stopped renewing its lease this long (it died) is taken over by another process',
    ),
  WEBHOOK_POLL_MS: int(10, 60_000)
    .default(200)
    .describe(
      "how often idle delivery workers look for due deliveries written by other processes (backing off to `POLL_MAX_IDLE_MS`; this process's own fan-out wakes them at once)",
    ),
  WEBHOOK_LOG_RETENTION_SECONDS: int(3600, 365 * 86_400)
    .default(30 * 86_400)
    .describe('the delivery log (attempts) and finished deliveries are kept this long')
    .meta({ shownDefault: '`2592000` (30 days)' }),
  WEBHOOK_SECRET_OVERLAP_SECONDS: int(0, 30 * 86_400)
    .default(86_400)
    .describe('after `rotate-secret`, the old secret signs alongside the new one this long (two `v1,` signatures)')
    .meta({ shownDefault: '`86400` (24 h)' }),
  WEBHOOK_ALLOW_HOSTS: csv
    .default([])
    .describe(
      'hosts, as written in webhook URLs, whose private or loopback addresses webhooks may reach anyway (lib/ssrf-guard.ts): `host:port` for one port (e.g. `127.0.0.1:8080` for a test receiver), a bare `host` for every port of it; unset: public addresses only (docs/ssrf-guard.md)',
    ),
});

declare module '../../lib/config' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the module's settings join Config
  interface ModuleSettings extends z.output<z.ZodObject<ReturnType<typeof integrationsSettings>>> {}
}
