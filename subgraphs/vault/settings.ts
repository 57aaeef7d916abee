// The vault module's settings that only the module reads: its fragment of the configuration
// (lib/config.ts merges it; each `.describe()` is the setting's row in docs/configuration.md,
// written by `npm run docs:config`). VAULT_MAX_FILE_BYTES, which transfer reads too, stays in
// lib/config.ts.
import path from 'node:path';
import { z } from 'zod';
import type { Config, SettingKinds } from '../../lib/config';

export const vaultSettings = ({ int, csv }: SettingKinds) => ({
  VAULT_DIR: z
    .string()
    .optional()
    .describe(
      'where Vault files are stored (the blob store, `<item id>.bin`); every vault process must see the same folder (unless `BLOB_STORE_URL` is set)',
    )
    .meta({ shownDefault: '`DATA_DIR/vault`' }),
  VAULT_CAPTURE_BODY_LIMIT_BYTES: int(1024, 2 * 1024 ** 3)
    .default(14 * 1024 * 1024)
    .describe(
      'body limit of `POST /api/v1/vault/items` only (room for a 10 MiB file in base64); every other route keeps `BODY_LIMIT_BYTES`',
    )
    .meta({ shownDefault: '`14680064` (14 MiB)' }),
  VAULT_FETCH_ALLOW_HOSTS: csv
    .default([])
    .describe(
      'hosts, as written in URLs, whose non-public addresses the link fetcher may reach: `host:port` for one port (`127.0.0.1:8080`), a bare `host` for every port of it (`localhost` stays blocked when `127.0.0.1` is listed); public addresses need no listing (docs/ssrf-guard.md)',
    )
    .meta({ shownDefault: 'empty' }),
  VAULT_FETCH_MAX_BYTES: int(1024, 1024 ** 3)
    .default(2 * 1024 * 1024)
    .describe(
      'bytes of a fetched answer read, counted after decompression; HTML beyond is cut (its start is parsed), another type keeps the size its headers announce',
    )
    .meta({ shownDefault: '`2097152` (2 MiB)' }),
  VAULT_FETCH_TIMEOUT_MS: int(100, 600_000)
    .default(10_000)
    .describe(
      'the whole fetch of a link (every redirect and the body) ends within this, or the item fails with `timeout`',
    ),
  VAULT_FETCH_MAX_REDIRECTS: int(0, 20)
    .default(5)
    .describe('redirects followed, each connection through the SSRF guard; more: `too_many_redirects`'),
  VAULT_PARSE_TIMEOUT_MS: int(100, 600_000)
    .default(5000)
    .describe(
      'longest a page or a file may take in the parser thread; the thread is then replaced and the item fails with `parse_timeout`',
    ),
  VAULT_TEXT_MAX_CHARS: int(1000, 16_000_000)
    .default(1_000_000)
    .describe('characters of text an item keeps (a captured text longer than this is refused with 400)'),
  VAULT_PARSE_THREADS: int(1, 64)
    .default(2)
    .describe(
      'parser threads of a process that enriches (at most `VAULT_ENRICH_CONCURRENCY`; each starts on its first page): pages are parsed on that many cores at once',
    ),
  VAULT_ENRICH_CONCURRENCY: int(0, 64)
    .default(2)
    .describe('items this process enriches at once; `0`: none here (leave them to `npm run start:worker -- vault`)'),
  VAULT_ENRICH_LEASE_SECONDS: int(2, 3600)
    .default(30)
    .describe('an enrichment whose worker stopped renewing its lease for this long is taken by another worker'),
  VAULT_ENRICH_MAX_ATTEMPTS: int(1, 100)
    .default(3)
    .describe('takes of one enrichment (workers that died on it) before it fails with `interrupted`'),
  VAULT_ENRICH_POLL_MS: int(5, 60_000)
    .default(200)
    .describe(
      'how often idle enrichment workers look for items captured by other processes (doubling to `POLL_MAX_IDLE_MS`; captures in the same process wake them at once)',
    ),
  VAULT_ITEMS_PER_USER: int(1, 100_000_000)
    .default(100_000)
    .describe('items one user keeps; past it a capture is 409 `conflict` with `details: { limit, max, count }`'),
  VAULT_FILE_BYTES_PER_USER: int(1, Number.MAX_SAFE_INTEGER)
    .default(5 * 1024 ** 3)
    .describe('file bytes one user keeps; past it 409 `conflict` with `details: { limit, max, count }`')
    .meta({ shownDefault: '`5368709120` (5 GiB)' }),
  VAULT_PENDING_PER_USER: int(1, 100_000)
    .default(10)
    .describe(
      "a user's items waiting for enrichment at once, of any kind; one more is refused with 429 `rate_limit_exceeded` (`Retry-After: 5`)",
    ),
  VAULT_RULES_PER_USER: int(1, 10_000)
    .default(100)
    .describe('classification rules one user keeps; past it 409 `conflict` with `details: { limit, max, count }`'),
  VAULT_CLASSIFY_MIN_CONFIDENCE: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(0.6)
    .describe("the learned classifier's category is taken only at this confidence or above (0–1)"),
  VAULT_KEYWORD_TAGS: int(0, 50).default(5).describe('automatic keyword tags (source `auto`) per item; `0`: none'),
});

/** Where the Vault's files are kept on disk (BLOB_STORE_URL unset): VAULT_DIR, else DATA_DIR/vault. */
export const vaultDir = (config: Pick<Config, 'VAULT_DIR' | 'dataDir'>): string =>
  path.resolve(config.VAULT_DIR ?? path.join(config.dataDir, 'vault'));

declare module '../../lib/config' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the module's settings join Config
  interface ModuleSettings extends z.output<z.ZodObject<ReturnType<typeof vaultSettings>>> {}
}
