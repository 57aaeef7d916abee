// The one place where configuration is read and validated. Every process reads its
// settings through loadConfig(); nothing else looks at process.env.
import path from 'node:path';
import { z } from 'zod';
import type { TracingSettings } from './tracing/exporter';

/**
 * The kinds of value a setting takes, shared by the host's schema and the modules' fragments. Built
 * when configuration is loaded (once per process) rather than when this module is imported:
 * module-level code runs before a test can switch a mutant on, so mutation testing could not
 * check its bounds and defaults.
 */
export function settingKinds() {
  const bool = z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .transform((v) => v === 'true' || v === '1' || v === 'yes');
  const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
  const csv = z.string().transform((s) =>
    s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
  );
  return { bool, int, csv };
}
export type SettingKinds = ReturnType<typeof settingKinds>;

/**
 * A module's settings (subgraphs/<name>/settings.ts, declared by its definition, lib/module.ts):
 * its part of the schema, built from the shared kinds. Each setting keeps a default where it has
 * one and says what it is with `.describe()`: its row in docs/configuration.md
 * (`npm run docs:config` writes them; test/lib/docs-config.test.ts fails when the page is stale).
 * Where the row should show its default otherwise (with its size in words, or the folder an unset
 * one stands for), the setting says so with `.meta({ shownDefault: '`…` (…)' })`.
 */
export type SettingsFragment = (kinds: SettingKinds) => Record<string, z.ZodType>;

/**
 * The settings the modules add, by type: each module's settings.ts adds its own by declaration
 * merging (`declare module '../../lib/config' { interface ModuleSettings extends … }`), so that
 * a module's settings are typed where they are read while this file names no module.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the modules' settings.ts
export interface ModuleSettings {}

/** The settings as parsed, the host's and the modules', before loadConfig() adds what it works out from them. */
export type Settings = z.infer<ReturnType<typeof hostSchema>> & ModuleSettings;

/**
 * A module's rules over several settings (its own together, or its own against the host's),
 * checked once every setting has parsed: the problems found, each naming its settings.
 */
export type SettingsCheck = (settings: Settings) => string[];

/** A module's fragment, by the module's name, with its rules over several settings. */
export interface ModuleFragment {
  module: string;
  settings: SettingsFragment;
  check?: SettingsCheck;
}

let moduleFragments: readonly ModuleFragment[] = [];

/**
 * Makes the modules' fragments part of this process's configuration. The module list
 * (subgraphs/index.ts) does it as it is loaded, so every entry point's loadConfig() reads them.
 */
export function installSettings(fragments: readonly ModuleFragment[]): void {
  moduleFragments = [...fragments];
}

/** The fragments installed (docs: bin/config-docs.ts). */
export const installedSettings = (): readonly ModuleFragment[] => moduleFragments;

/**
 * The whole schema: the host's settings and every installed module's. A setting named twice (by
 * two modules, or by a module and the host) is an error naming both.
 */
export function configSchema() {
  const host = hostSchema();
  const shape: Record<string, z.core.$ZodType> = {};
  const owner = new Map<string, string>(Object.keys(host.shape).map((k) => [k, 'lib/config.ts']));
  const kinds = settingKinds();
  for (const { module, settings } of moduleFragments) {
    for (const [name, type] of Object.entries(settings(kinds))) {
      const before = owner.get(name);
      if (before) throw new Error(`The setting ${name} is declared by ${before} and by the ${module} module`);
      owner.set(name, `the ${module} module`);
      shape[name] = type;
    }
  }
  return host.extend(shape) as unknown as typeof host;
}

/** The host's own settings (the kit, the gateway, the facade, the processes); the modules add theirs. */
export function hostSchema() {
  const { bool, int, csv } = settingKinds();
  const lowerCase = z.string().transform((s) => s.trim().toLowerCase());
  const otlpProtocol = lowerCase.pipe(
    z.enum(['http/protobuf', 'http/json'], {
      message: 'must be http/protobuf or http/json (grpc is not supported: use the OTLP/HTTP port, 4318)',
    }),
  );
  /** The W3C Baggage-like list OpenTelemetry uses for headers and resource attributes. */
  const keyValueList = (what: string) =>
    z.string().transform((s, ctx) => {
      const pairs: Record<string, string> = {};
      for (const item of s.split(',')) {
        if (!item.trim()) continue;
        const eq = item.indexOf('=');
        const key = eq > 0 ? item.slice(0, eq).trim() : '';
        let value: string | undefined;
        try {
          value = eq > 0 ? decodeURIComponent(item.slice(eq + 1).trim()) : undefined;
        } catch {
          value = undefined;
        }
        if (!key || value === undefined || /[\s"]/.test(key)) {
          ctx.addIssue({
            code: 'custom',
            message: `"${item.trim()}" is not key=value (${what}, values percent-encoded)`,
          });
          return z.NEVER;
        }
        pairs[key] = value;
      }
      return pairs;
    });

  return z.object({
    PORT: int(0, 65535).default(8080),
    HOST: z.string().default('0.0.0.0'),
    DATA_DIR: z.string().default('./data'),
    /** `sqlite` (embedded, files under DATA_DIR) or `mysql://user:pass@host:port[/prefix]`. */
    DATABASE_URL: z
      .string()
      .regex(/^(sqlite|mysql:\/\/.+)$/, 'must be "sqlite" or a mysql://user:password@host:port[/prefix] URL')
      .default('sqlite'),
    DATABASE_POOL_SIZE: int(1, 500).default(10),
    MIGRATIONS_RUN: bool.default(true),
    /** How long a starting process waits for another one that is migrating the same database (MySQL). */
    MIGRATION_LOCK_TIMEOUT_SECONDS: int(1, 3600).default(120),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * Serve GET /metrics (Prometheus) on this port instead of the service's own. Either way it
     * needs no token: keep it off the public network.
     */
    METRICS_PORT: int(0, 65535).optional(),
    /** `false`: no /metrics and no per-request timing (for measuring what metrics cost). */
    METRICS_ENABLED: bool.default(true),
    // OpenTelemetry's standard variables (the SDK's environment specification), read here and
    // handed to lib/tracing/ as `tracing` (see otelSettings below). One not supported, or with
    // a value this service does not support (grpc, a sampler such as jaeger_remote), stops the start.
    /** Traces are exported over OTLP/HTTP to `<endpoint>/v1/traces` when set. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
    /** The traces' own endpoint, used as it is (no /v1/traces added); wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
    /**
     * `http/json` (the default here: OpenTelemetry JS's protobuf serializer measured slower,
     * docs/observability.md) or `http/protobuf`; grpc is not supported.
     */
    OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
    /** `key=value,…` (values percent-encoded) sent with every export; the traces' own win per key. */
    OTEL_EXPORTER_OTLP_HEADERS: keyValueList('headers').optional(),
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValueList('headers').optional(),
    /** `otlp` or `none` (comma-separated as the specification allows); other exporters are not supported. */
    OTEL_TRACES_EXPORTER: lowerCase
      .pipe(csv)
      .pipe(
        z.array(z.enum(['otlp', 'none'], { message: 'only otlp and none are supported (console, zipkin… are not)' })),
      )
      .optional(),
    /** `true`: no tracing at all, whatever else is set. */
    OTEL_SDK_DISABLED: lowerCase.pipe(z.enum(['true', 'false'], { message: 'must be true or false' })).optional(),
    /** The `service.name` of every span; default: the process's kind (`gateway`, `facade`, `subgraph-tts`…). */
    OTEL_SERVICE_NAME: z.string().trim().min(1).optional(),
    /** `key=value,…` (values percent-encoded): resource attributes of every span (OTEL_SERVICE_NAME wins for service.name). */
    OTEL_RESOURCE_ATTRIBUTES: keyValueList('resource attributes').optional(),
    /**
     * always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or
     * parentbased_traceidratio. Unset: parentbased_traceidratio at TRACE_SAMPLE_RATIO. A parent's
     * flag counts only from a trusted caller (TRACE_TRUST_PARENT, or a hop of this service).
     */
    OTEL_TRACES_SAMPLER: lowerCase
      .pipe(
        z.enum(
          [
            'always_on',
            'always_off',
            'traceidratio',
            'parentbased_always_on',
            'parentbased_always_off',
            'parentbased_traceidratio',
          ],
          {
            message:
              'must be always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio (jaeger_remote and xray are not supported)',
          },
        ),
      )
      .optional(),
    /** The ratio (0–1) of traceidratio and parentbased_traceidratio; default 1. */
    OTEL_TRACES_SAMPLER_ARG: z.string().trim().optional(),
    /**
     * Express "trust proxy" setting: which hops may set X-Forwarded-For (docs/client-addresses.md).
     * Default: no one, so that no caller (a co-located one included) chooses its own address.
     */
    TRUST_PROXY: z.string().default('false'),
    /** Large enough for a synthesis text of 10,000 characters however they are escaped. */
    BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024).default(256 * 1024),
    /** Bodies between this service's own processes (with the hop secret): a route's own larger limit passes on. */
    HOP_BODY_LIMIT_BYTES: int(1024, 256 * 1024 * 1024).default(16 * 1024 * 1024),
    /** A JSON body larger than this is a large body (lib/large-bodies.ts): admitted by the budgets below, parsed in a thread. */
    LARGE_BODY_BYTES: int(1024, 256 * 1024 * 1024).default(1024 * 1024),
    /** The bytes of large bodies one process reads and parses at once; beyond, 503 with Retry-After. */
    LARGE_BODY_BUDGET_BYTES: int(1024, 4 * 1024 ** 3).default(64 * 1024 * 1024),
    /** Large bodies of one caller in flight at once in one process; beyond, 429 with Retry-After. */
    LARGE_BODIES_PER_USER: int(1, 1000).default(2),
    /** How long parsing one large body may take in its thread before it is refused (400) and the thread replaced. */
    LARGE_BODY_PARSE_TIMEOUT_MS: int(100, 120_000).default(10_000),

    // Access tokens (lib/tokens.ts): auth signs them, every process verifies them.
    JWT_PRIVATE_KEY: z.string().optional(),
    JWT_PUBLIC_KEY: z.string().optional(),
    JWT_ISSUER: z.string().default('federated-auth-voice'),
    /** An access token's lifetime; the event log keeps revocations at least this long (EVENT_RETENTION_SECONDS). */
    ACCESS_TOKEN_TTL_SECONDS: int(60, 86_400).default(3600),

    /** How long the event log keeps events (a resume from further back gets resync_required). */
    EVENT_RETENTION_SECONDS: int(3600, 365 * 86_400).default(7 * 86_400),
    /** How often outboxes are relayed to the event log, and the log read for new events. */
    EVENT_POLL_MS: int(5, 10_000).default(50),
    /** Events held for one slow subscriber before its stream is ended (it resumes with Last-Event-ID). */
    EVENT_BUFFER_SIZE: int(10, 100_000).default(1000),
    EVENT_HEARTBEAT_SECONDS: int(1, 300).default(15),

    // Idle cost (docs/idle-cost.md): pollers back off while they find nothing.
    /**
     * Longest pause of the outbox relays, event-log readers and synthesis workers while nothing
     * happens (from EVENT_POLL_MS / SYNTHESIS_POLL_MS, doubling): how late a write made by ANOTHER
     * process may be noticed. Writes made in the same process wake their readers at once.
     */
    POLL_MAX_IDLE_MS: int(5, 60_000).default(1000),

    // Background jobs (lib/kit/jobs.ts, docs/background-jobs.md): work over many rows in every module.
    /** Jobs asked by requests (tag renames…) one user may have waiting or running per module; beyond: 429 with Retry-After. */
    JOBS_PENDING_PER_USER: int(1, 1_000_000).default(100),
    /** Rows per transaction of background work (a deleted user's data, hub deletion) unless a module sets its own; at most 1,000. */
    JOBS_BATCH_ROWS: int(1, 1000).default(1000),
    /** A background job's lease: a runner that stops renewing it (one batch) for this long loses the job to another. */
    JOBS_LEASE_SECONDS: int(2, 3600).default(30),

    /**
     * GraphQL operation limits, checked at the gateway (/graphql and /graphql/stream) before
     * validation and query planning: planning time grows with the size of a document.
     */
    GRAPHQL_MAX_TOKENS: int(100, 1_000_000).default(10_000),
    GRAPHQL_MAX_DEPTH: int(2, 1000).default(12),
    GRAPHQL_MAX_ALIASES: int(0, 10_000).default(30),
    GRAPHQL_MAX_ROOT_FIELDS: int(1, 10_000).default(20),
    /** Expensive fields (searches, neighbours; lib/kit/expensive.ts) in one operation, aliases included. */
    GRAPHQL_MAX_EXPENSIVE_FIELDS: int(1, 1000).default(2),
    GRAPHQL_MAX_DIRECTIVES: int(0, 10_000).default(50),
    /** Cost budget of one operation: a field costs 1, a list field its page size times its selection. */
    GRAPHQL_MAX_COST: int(10, 10_000_000).default(5000),
    /** The same for callers without a token (login, refresh, introspection in development). */
    GRAPHQL_MAX_COST_ANONYMOUS: int(10, 10_000_000).default(200),
    /** Largest GraphQL answer; a larger one becomes an error (counted before it is serialised). */
    GRAPHQL_MAX_RESPONSE_BYTES: int(16 * 1024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
    /**
     * Audio bytes (before base64) one GraphQL operation may read through `chunk`, over all its
     * aliases. At least the 512 KiB piece the REST facade fetches per operation.
     */
    GRAPHQL_MAX_AUDIO_BYTES: int(512 * 1024, 1024 * 1024 * 1024).default(4 * 1024 * 1024),
    /** Schema introspection (and "Did you mean" suggestions); default: on unless NODE_ENV=production. */
    GRAPHQL_INTROSPECTION: bool.optional(),
    /** Concurrent event streams of one user in one process (REST and GraphQL together). */
    EVENT_STREAMS_PER_USER: int(1, 100_000).default(20),

    /**
     * Distributed mode: the gateway(s) the facade talks to, comma-separated; requests are spread
     * over them and one that refuses connections is skipped. Empty: in-process.
     */
    GATEWAY_URL: csv.pipe(z.array(z.string().url('must be http(s) URLs, comma-separated'))).default([]),
    /** Distributed mode: `name=url` pairs of the subgraphs the gateway composes. */
    SUBGRAPH_URLS: csv.default([]),
    /** Which subgraphs this process runs or composes; empty: all of subgraphs/index.ts. */
    SUBGRAPHS: csv.default([]),
    SUPERGRAPH_PATH: z.string().optional(),

    /** `production` turns the GraphQL explorer off unless GRAPHQL_EXPLORER says otherwise. */
    NODE_ENV: z.string().default('development'),
    /**
     * Browser origins (scheme://host[:port], exact) allowed to call /api/v1, /graphql and
     * /graphql/stream from scripts. Empty: no CORS headers at all.
     */
    CORS_ORIGINS: csv
      .pipe(
        z.array(
          z.string().regex(/^https?:\/\/[^/\s,]+$/, 'must be origins like https://app.example.com, comma-separated'),
        ),
      )
      .default([]),
    /** How long a browser may cache a CORS preflight answer. */
    CORS_MAX_AGE_SECONDS: int(0, 86_400).default(600),
    /** GraphiQL at GET /graphql for browsers; default on outside production. */
    GRAPHQL_EXPLORER: bool.optional(),
    /** Lifetime of a stream ticket (POST /api/v1/auth/stream-ticket): the time to open the stream with it. */
    STREAM_TICKET_TTL_SECONDS: int(5, 300).default(30),

    // ---- metrics, speech answers' write timeout, trace sampling ----
    /** In production, /metrics on the service's own port only when true (else use METRICS_PORT). */
    METRICS_PUBLIC: bool.default(false),
    /** A speech answer (POST /v1/audio/speech, the REST audio download) whose reader takes nothing for this long is cut off. */
    SPEECH_WRITE_TIMEOUT_SECONDS: int(1, 3600).default(60),
    /**
     * Callers whose `traceparent` sampled flag is believed (Express trust-proxy syntax: addresses,
     * CIDRs, `loopback`, `uniquelocal`…). Others keep their trace id but are sampled by TRACE_SAMPLE_RATIO.
     */
    TRACE_TRUST_PARENT: csv
      .pipe(
        z.array(
          z
            .string()
            .refine(
              (e) => ['loopback', 'linklocal', 'uniquelocal'].includes(e) || /^[\d.:a-fA-F]+(\/\d{1,3})?$/.test(e),
              'must be addresses, CIDRs, loopback, linklocal or uniquelocal, comma-separated',
            ),
        ),
      )
      .default([]),
    /** The share of traces this process starts (or of untrusted callers' traces) that it samples. */
    TRACE_SAMPLE_RATIO: z.coerce.number().min(0).max(1).default(1),
    // ---- expensive operations and search (lib/kit/expensive.ts, lib/kit/owner-search.ts) ----
    /** Expensive operations (searches, neighbours) of one user running at once in a process; beyond: 429 with Retry-After. */
    EXPENSIVE_PER_USER: int(1, 1000).default(2),
    /** Milliseconds a refusal beyond EXPENSIVE_PER_USER is held before it is sent, so that a caller asking again at once cannot flood the process with refusals; 0: sent at once. */
    EXPENSIVE_REFUSAL_HOLD_MS: int(0, 10_000).default(250),
    /** Refusals held at once in a process (each a connection waiting on a timer); beyond, sent at once. */
    EXPENSIVE_REFUSALS_HELD: int(0, 1_000_000).default(10_000),
    /** Words and phrases of one search (notes, Vault); more: 400 `validation_error`. */
    SEARCH_MAX_TERMS: int(1, 64).default(8),
    /** SQLite: a search ranks at most this many matches, the newest; more matching notes or items are left unranked. */
    SEARCH_CANDIDATES: int(10, 1_000_000).default(500),
    /** SQLite: threads that run the expensive reads (a search's ranking), each with a read-only connection of its own, off the event loop; 0: on the event loop. */
    SQLITE_READ_THREADS: int(0, 64).default(2),
    /** SQLite: the longest a request waits for an expensive read (its wait for a thread included); beyond, 503 with Retry-After (the statement ends in its thread: SQLite's cannot be interrupted). */
    SQLITE_READ_TIMEOUT_MS: int(100, 600_000).default(10_000),
    /** MySQL: pooled connections the expensive reads of a process may hold at once (at most DATABASE_POOL_SIZE − 2, at least 1); more wait their turn. */
    EXPENSIVE_READ_CONNECTIONS: int(1, 500).default(3),
    /**
     * Largest file a Vault capture takes, decoded (its base64 is a third larger). Read by the vault
     * and by transfer (a file an import brings in), so it stays here.
     */
    VAULT_MAX_FILE_BYTES: int(1024, 1024 ** 3).default(10 * 1024 * 1024),

    // Hops between this service's processes (lib/hop.ts, docs/operation-pipeline.md).
    /**
     * The hop secret every process sends to the next (facade → gateway → subgraph). In production
     * a subgraph answers only callers presenting it (without one it listens on loopback); the
     * forwarded client address is believed only with it. At least 32 characters; unset: none.
     */
    SUBGRAPH_SECRET: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)').optional(),

    // ---- Idempotency-Key (lib/idempotency.ts) and API keys at the edge (lib/api-keys.ts) ----
    /** How long an Idempotency-Key's first answer is kept and replayed. */
    IDEMPOTENCY_TTL_SECONDS: int(60, 30 * 86_400).default(86_400),
    /** A claim whose request recorded no answer for this long (its process died) may be taken over by a retry. */
    IDEMPOTENCY_LOCK_SECONDS: int(1, 3600).default(60),
    /** How long the edge keeps a key's token (by the key's hash) before it asks auth again: at most 60 s. */
    API_KEY_CACHE_SECONDS: int(0, 60).default(60),
    /**
     * Where the event log lives (CONTRACT.md, "Beyond one machine"): unset, the `events` database's
     * table; `nats://host:port[,host:port…]`, a NATS JetStream stream (lib/event-backends.ts).
     */
    EVENT_LOG_URL: z
      .string()
      .trim()
      .regex(/^nats:\/\/[^\s/,]+(,[^\s/,]+)*\/?$/i, 'must be nats://host:port[,host:port…]')
      .optional(),
    /** The JetStream stream of the log (EVENT_LOG_URL); its subjects are `<name>.<user>.<type>`. */
    EVENT_LOG_STREAM: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be letters, digits, _ or - (a stream name and subject token)')
      .default('EVENTS'),
    /**
     * JetStream's deduplication window for a new stream: an outbox relay that publishes an event
     * again within it (it crashed before deleting its outbox rows) is dropped by Nats-Msg-Id.
     */
    EVENT_LOG_DEDUP_WINDOW_SECONDS: int(10, 86_400).default(600),
    /** The replicas of a new stream (a NATS cluster: 3; one server: 1). */
    EVENT_LOG_REPLICAS: int(1, 5).default(1),
    /** Days a deleted note, vault item or hub stays in the trash before it is purged (fractions allowed, e.g. for tests). */
    TRASH_RETENTION_DAYS: z.coerce.number().min(0).max(3650).default(30),
    /**
     * Where the modules' files (rendered audio, Vault files, imports…) are stored (lib/blob-store.ts):
     * unset, each module's folder under DATA_DIR (AUDIO_DIR…); `nats://host:port[,host:port…]/<bucket>` a JetStream
     * object store; `s3://<bucket>[/<prefix>]?endpoint=<url>&region=<r>&force_path_style=true|false`
     * S3 or an S3-compatible store (credentials from the standard AWS environment and files).
     */
    BLOB_STORE_URL: z
      .string()
      .trim()
      .superRefine((value, ctx) => {
        const problem = blobStoreUrlProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  });
}

export type Config = Settings & {
  /** OpenTelemetry's settings as lib/tracing/ takes them; null when tracing is off. */
  tracing: TracingSettings | null;
  graphqlExplorer: boolean;
  dataDir: string;
  /** GRAPHQL_INTROSPECTION, or on unless NODE_ENV=production. */
  introspection: boolean;
  subgraphUrls: Record<string, string>;
};

export class ConfigError extends Error {}

/** What is wrong with a BLOB_STORE_URL, or null. */
function blobStoreUrlProblem(value: string): string | null {
  if (value.startsWith('nats://')) {
    const match = /^nats:\/\/(?:[^@/]*@)?([^@/]+)\/([^/?#]*)\/?$/.exec(value);
    if (!match) return 'must be nats://host:port[,host:port…]/<bucket>';
    if (!/^[A-Za-z0-9_-]+$/.test(match[2]))
      return 'the bucket must be letters, digits, - and _ (nats://host:port/<bucket>)';
    return null;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be nats://host:port/<bucket> or s3://<bucket>[/<prefix>]?endpoint=…&region=…';
  }
  if (url.protocol === 's3:') {
    if (!url.hostname) return 's3:// needs a bucket (s3://<bucket>[/<prefix>])';
    const endpoint = url.searchParams.get('endpoint');
    if (endpoint && !/^https?:\/\/[^/]/.test(endpoint)) return 'endpoint must be an http(s):// URL';
    const style = url.searchParams.get('force_path_style');
    if (style !== null && !['true', 'false', '1', '0'].includes(style)) return 'force_path_style must be true or false';
    const unknown = [...url.searchParams.keys()].filter((k) => !['endpoint', 'region', 'force_path_style'].includes(k));
    if (unknown.length) return `unknown parameter ${unknown[0]} (endpoint, region, force_path_style)`;
    return null;
  }
  return 'must start with nats:// or s3://';
}

/** Reads and validates the environment; throws a ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema().safeParse(
    Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  // The modules' settings are in it too (their fragments, installed: configSchema); typed by ModuleSettings.
  const cfg = parsed.data as Settings;
  const problems = moduleFragments.flatMap((f) => f.check?.(cfg) ?? []);
  if (problems.length) throw new ConfigError(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  if (cfg.EVENT_RETENTION_SECONDS < cfg.ACCESS_TOKEN_TTL_SECONDS) {
    // Revoked sessions are looked up in the event log for as long as their tokens live.
    throw new ConfigError(
      'Invalid configuration:\n  EVENT_RETENTION_SECONDS must be at least ACCESS_TOKEN_TTL_SECONDS',
    );
  }
  const subgraphUrls: Record<string, string> = {};
  for (const pair of cfg.SUBGRAPH_URLS) {
    const [name, url] = pair.split('=');
    if (!name || !url || !/^https?:\/\//.test(url)) {
      throw new ConfigError(
        `Invalid configuration:\n  SUBGRAPH_URLS: "${pair}" is not name=http(s)://host:port/graphql`,
      );
    }
    subgraphUrls[name] = url;
  }
  const tracing = otelSettings(cfg);
  const dataDir = path.resolve(cfg.DATA_DIR);
  const graphqlExplorer = cfg.GRAPHQL_EXPLORER ?? cfg.NODE_ENV !== 'production';
  const introspection = cfg.GRAPHQL_INTROSPECTION ?? cfg.NODE_ENV !== 'production';
  return {
    ...cfg,
    graphqlExplorer,
    introspection,
    tracing,
    dataDir,
    subgraphUrls,
  };
}

/**
 * OpenTelemetry's SDK settings (opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables):
 * tracing is on when an endpoint is set, or OTEL_TRACES_EXPORTER names otlp (then the
 * specification's default endpoint, http://localhost:4318); OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none turns it off whatever else is set.
 */
function otelSettings(cfg: z.infer<ReturnType<typeof hostSchema>>): TracingSettings | null {
  const fail = (message: string) => {
    throw new ConfigError(`Invalid configuration:\n  ${message}`);
  };
  const sampler = cfg.OTEL_TRACES_SAMPLER;
  let ratio = sampler === undefined ? cfg.TRACE_SAMPLE_RATIO : 1;
  if (sampler === 'always_off' || sampler === 'parentbased_always_off') ratio = 0;
  if ((sampler === 'traceidratio' || sampler === 'parentbased_traceidratio') && cfg.OTEL_TRACES_SAMPLER_ARG) {
    ratio = Number(cfg.OTEL_TRACES_SAMPLER_ARG);
    if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
      fail(`OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 for ${sampler}`);
  }
  const exporters = cfg.OTEL_TRACES_EXPORTER ?? [];
  if (cfg.OTEL_SDK_DISABLED === 'true') return null;
  if (exporters.length && !exporters.includes('otlp')) return null; // none
  const base = cfg.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!cfg.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !base && !exporters.includes('otlp')) return null;
  const url =
    cfg.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(base ?? 'http://localhost:4318').replace(/\/$/, '')}/v1/traces`;
  const resource = { ...cfg.OTEL_RESOURCE_ATTRIBUTES };
  if (cfg.OTEL_SERVICE_NAME) resource['service.name'] = cfg.OTEL_SERVICE_NAME;
  return {
    url,
    protocol: cfg.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? cfg.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/json',
    headers: { ...cfg.OTEL_EXPORTER_OTLP_HEADERS, ...cfg.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    resource,
    sampler: { parentBased: sampler === undefined || sampler.startsWith('parentbased_'), ratio },
  };
}
