// The auth module's settings that only the module reads: its fragment of the configuration
// (lib/config.ts merges it; each `.describe()` is the setting's row in docs/configuration.md,
// written by `npm run docs:config`). The token settings every process reads (JWT_*,
// ACCESS_TOKEN_TTL_SECONDS, STREAM_TICKET_TTL_SECONDS) and the edge's API_KEY_CACHE_SECONDS stay in
// lib/config.ts.
import { z } from 'zod';
import type { SettingKinds, SettingsCheck } from '../../lib/config';

export const authSettings = ({ int }: SettingKinds) => ({
  REFRESH_TOKEN_TTL_SECONDS: int(3600, 400 * 86_400)
    .default(90 * 86_400)
    .describe('refresh token lifetime'),
  AUTH_BOOTSTRAP_USERNAME: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .optional()
    .describe('an admin created at start when missing: its username (with `AUTH_BOOTSTRAP_PASSWORD`)'),
  AUTH_BOOTSTRAP_PASSWORD: z
    .string()
    .min(8)
    .max(1024)
    .optional()
    .describe('an admin created at start when missing: its password (with `AUTH_BOOTSTRAP_USERNAME`)'),
  PASSWORD_HASH_MEMORY_KIB: int(1024, 4 * 1024 * 1024)
    .default(OWASP_ARGON2_MEMORY_KIB)
    .describe(
      "argon2id's memory cost (KiB) of new password hashes (t=2, p=1); existing hashes keep theirs. Below the default (OWASP's minimum) only with `NODE_ENV=test`: the test servers use 1024",
    ),
  PASSWORD_MIN_SCORE: int(0, 4)
    .default(3)
    .describe(
      'strength (zxcvbn, 0–4) a new password must reach, besides 8–1024 characters; existing passwords keep working',
    ),
  LOGIN_MAX_FAILURES_PER_USER: int(1, 1_000_000)
    .default(5)
    .describe('login rate limit: failures per username and address in the window (docs/login-limits-and-sessions.md)'),
  LOGIN_MAX_ATTEMPTS_PER_CLIENT: int(1, 1_000_000)
    .default(100)
    .describe('login rate limit: failed attempts per address in the window (a success gives its point back)'),
  LOGIN_RATE_WINDOW_SECONDS: int(1, 86_400)
    .default(900)
    .describe("the login rate limits' window (docs/login-limits-and-sessions.md)"),
  LOGIN_MAX_FAILURES_PER_USERNAME: int(1, 1_000_000)
    .default(20)
    .describe(
      'failures for one username from any addresses in the window; past it that username answers 429 with `Retry-After` (the right password too) until the window passes or an administrator unlocks it ([login-limits-and-sessions.md](login-limits-and-sessions.md))',
    ),
  MAX_SESSIONS_PER_USER: int(1, 100_000)
    .default(100)
    .describe('active sessions per user; a login past it revokes the oldest (reason `session_limit`)'),
  RATE_LIMIT_STORE: z
    .enum(['database', 'memory'])
    .default('database')
    .describe('`database` shares counts between instances; `memory` is per process'),
  ROLES_MAX: int(1, 10_000)
    .default(100)
    .describe(
      'custom roles at most (`POST /api/v1/admin/roles` past it: 409 `conflict` with `details: { limit, max, count }`); the built-in `admin` and `user` do not count',
    ),
  API_KEYS_PER_USER: int(1, 10_000)
    .default(50)
    .describe(
      'API keys one user may hold (not revoked); one more is refused with 409 `conflict` (`details: { limit, max, count }`)',
    ),
  API_KEY_TOKEN_TTL_SECONDS: int(30, 3600)
    .default(120)
    .describe("lifetime of the access token an API key is exchanged for at the edge (never past the key's expiry)"),
  API_KEY_MAX_FAILURES_PER_CLIENT: int(1, 100_000)
    .default(20)
    .describe(
      "API keys that do not answer (unknown, expired, revoked) per client address per `LOGIN_RATE_WINDOW_SECONDS`, counted in the login limiter's store (`RATE_LIMIT_STORE`); past it, every key from that address gets 429 with `Retry-After` until the window passes",
    ),
  API_KEY_HASH_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)')
    .optional()
    .describe(
      "the HMAC key of the API keys' stored hashes, at least 32 characters; set it before rotating the signing key (otherwise every API key stops working)",
    )
    .meta({ shownDefault: 'unset: derived from `JWT_PRIVATE_KEY`' }),
});

/** What lib/config.ts cannot check setting by setting: the bootstrap admin's pair, a session outliving its tokens. */
/** argon2id's memory cost at t=2, p=1 in OWASP's password storage cheat sheet (19 MiB): the least allowed outside tests. */
export const OWASP_ARGON2_MEMORY_KIB = 19 * 1024;

export const checkAuthSettings: SettingsCheck = (s) => [
  ...(!!s.AUTH_BOOTSTRAP_USERNAME !== !!s.AUTH_BOOTSTRAP_PASSWORD
    ? ['AUTH_BOOTSTRAP_USERNAME and AUTH_BOOTSTRAP_PASSWORD must be set together']
    : []),
  // A session whose refresh token expired counts as ended (quota, revoking): no access token may outlive it.
  ...(s.REFRESH_TOKEN_TTL_SECONDS < s.ACCESS_TOKEN_TTL_SECONDS
    ? ['REFRESH_TOKEN_TTL_SECONDS must be at least ACCESS_TOKEN_TTL_SECONDS']
    : []),
  // Only a test run may store weaker hashes: its passwords protect nothing.
  ...(s.PASSWORD_HASH_MEMORY_KIB < OWASP_ARGON2_MEMORY_KIB && s.NODE_ENV !== 'test'
    ? [
        `PASSWORD_HASH_MEMORY_KIB must be at least ${OWASP_ARGON2_MEMORY_KIB} (OWASP's minimum for argon2id) unless NODE_ENV=test`,
      ]
    : []),
];

declare module '../../lib/config' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the module's settings join Config
  interface ModuleSettings extends z.output<z.ZodObject<ReturnType<typeof authSettings>>> {}
}
