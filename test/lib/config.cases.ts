// Configuration checking (lib/config.ts): the defaults the README lists, and a bad value named
// in the error. No database: the same on both jest projects.
import path from 'node:path';
import { ConfigError, loadConfig } from '../../lib/config';
import { audioDir } from '../../subgraphs/tts/settings';
// The module list installs the modules' settings (their settings.ts), as every entry point loads it.
import '../../subgraphs';

/** The message of the ConfigError that loading `env` throws. */
function refusal(env: Record<string, string | undefined>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('fills every default the README lists', () => {
    const config = loadConfig({});
    // toMatchObject: a setting added later needs no change here (but deserves a line).
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      DATA_DIR: './data',
      DATABASE_URL: 'sqlite',
      DATABASE_POOL_SIZE: 10,
      MIGRATIONS_RUN: true,
      METRICS_ENABLED: true,
      LOG_LEVEL: 'info',
      TRUST_PROXY: 'false',
      BODY_LIMIT_BYTES: 262144,
      JWT_ISSUER: 'federated-auth-voice',
      ACCESS_TOKEN_TTL_SECONDS: 3600,
      REFRESH_TOKEN_TTL_SECONDS: 7776000,
      LOGIN_MAX_FAILURES_PER_USER: 5,
      LOGIN_MAX_FAILURES_PER_USERNAME: 20,
      LOGIN_MAX_ATTEMPTS_PER_CLIENT: 100,
      LOGIN_RATE_WINDOW_SECONDS: 900,
      RATE_LIMIT_STORE: 'database',
      MAX_SESSIONS_PER_USER: 100,
      EVENT_RETENTION_SECONDS: 604800,
      EVENT_POLL_MS: 50,
      EVENT_BUFFER_SIZE: 1000,
      EVENT_HEARTBEAT_SECONDS: 15,
      SYNTHESIS_CONCURRENCY: 1,
      SYNTHESIS_LEASE_SECONDS: 30,
      SYNTHESIS_MAX_ATTEMPTS: 3,
      SYNTHESIS_POLL_MS: 200,
      SYNTHESIS_MAX_AUDIO_SECONDS: 3600,
      SYNTHESIS_RETENTION_SECONDS: 604800,
      GATEWAY_URL: [],
      SUBGRAPH_URLS: [],
      SUBGRAPHS: [],
      subgraphUrls: {},
      dataDir: path.resolve('./data'),
    });
    // Optional settings stay unset rather than being invented.
    for (const key of [
      'JWT_PRIVATE_KEY',
      'JWT_PUBLIC_KEY',
      'AUTH_BOOTSTRAP_USERNAME',
      'AUTH_BOOTSTRAP_PASSWORD',
      'AUDIO_DIR',
      'SUPERGRAPH_PATH',
    ]) {
      expect(config).not.toHaveProperty(key);
    }
  });

  it('takes every log level pino knows, and silent', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      expect(loadConfig({ LOG_LEVEL: level }).LOG_LEVEL).toBe(level);
    expect(refusal({ LOG_LEVEL: 'verbose' })).toContain('LOG_LEVEL');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '', GATEWAY_URL: '' })).toMatchObject({
      PORT: 8080,
      LOG_LEVEL: 'info',
      GATEWAY_URL: [],
    });
  });

  it('reads numbers, booleans, lists and paths', () => {
    const config = loadConfig({
      PORT: '0',
      DATA_DIR: '/srv/fav',
      AUDIO_DIR: '/mnt/audio',
      MIGRATIONS_RUN: 'no',
      DATABASE_URL: 'mysql://root@127.0.0.1:3306/shop',
      GATEWAY_URL: ' http://a:4000 , https://b:4000 ,',
      SUBGRAPHS: ' auth, ,tts ',
      SUBGRAPH_URLS: 'auth=http://127.0.0.1:4001/graphql, tts=https://tts.internal/graphql',
      AUTH_BOOTSTRAP_USERNAME: '  admin  ',
      AUTH_BOOTSTRAP_PASSWORD: 'a long password',
      RATE_LIMIT_STORE: 'memory',
    });
    expect(config).toMatchObject({
      PORT: 0,
      dataDir: '/srv/fav',
      AUDIO_DIR: '/mnt/audio',
      MIGRATIONS_RUN: false,
      DATABASE_URL: 'mysql://root@127.0.0.1:3306/shop',
      GATEWAY_URL: ['http://a:4000', 'https://b:4000'],
      SUBGRAPHS: ['auth', 'tts'],
      subgraphUrls: { auth: 'http://127.0.0.1:4001/graphql', tts: 'https://tts.internal/graphql' },
      AUTH_BOOTSTRAP_USERNAME: 'admin',
      RATE_LIMIT_STORE: 'memory',
    });
    expect(audioDir(config)).toBe('/mnt/audio');
    expect(audioDir(loadConfig({ DATA_DIR: '/srv/fav' }))).toBe('/srv/fav/audio');
  });

  it.each([
    ['true', true],
    ['1', true],
    ['yes', true],
    ['false', false],
    ['0', false],
    ['no', false],
  ])('reads MIGRATIONS_RUN=%s as %s', (value, expected) => {
    expect(loadConfig({ MIGRATIONS_RUN: value }).MIGRATIONS_RUN).toBe(expected);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '65536' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ MIGRATIONS_RUN: 'maybe' }, 'MIGRATIONS_RUN'],
    [{ DATABASE_URL: 'postgres://localhost/db' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'sqlite3' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ RATE_LIMIT_STORE: 'redis' }, 'RATE_LIMIT_STORE'],
    [{ ACCESS_TOKEN_TTL_SECONDS: '59' }, 'ACCESS_TOKEN_TTL_SECONDS'],
    [{ ACCESS_TOKEN_TTL_SECONDS: '86401', EVENT_RETENTION_SECONDS: '100000' }, 'ACCESS_TOKEN_TTL_SECONDS'],
    [{ EVENT_BUFFER_SIZE: '9' }, 'EVENT_BUFFER_SIZE'],
    [{ SYNTHESIS_LEASE_SECONDS: '1' }, 'SYNTHESIS_LEASE_SECONDS'],
    [{ GATEWAY_URL: 'http://a:4000,not a url' }, 'GATEWAY_URL'],
    [{ AUTH_BOOTSTRAP_USERNAME: '   ', AUTH_BOOTSTRAP_PASSWORD: 'a long password' }, 'AUTH_BOOTSTRAP_USERNAME'],
    [{ AUTH_BOOTSTRAP_USERNAME: 'admin', AUTH_BOOTSTRAP_PASSWORD: 'short' }, 'AUTH_BOOTSTRAP_PASSWORD'],
  ])('refuses %j, naming %s', (env, variable) => {
    const message = refusal(env);
    expect(message).toMatch(/^Invalid configuration:\n/);
    // A list names the bad item's index too (GATEWAY_URL.1).
    expect(message).toMatch(new RegExp(`^  ${variable}(\\.\\d+)?: `, 'm'));
  });

  it('names every bad variable at once', () => {
    const message = refusal({ PORT: 'x', LOG_LEVEL: 'y', EVENT_POLL_MS: '1' });
    expect(
      message
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(':')[0])
        .sort(),
    ).toEqual(['EVENT_POLL_MS', 'LOG_LEVEL', 'PORT']);
  });

  it('accepts the bounds themselves', () => {
    expect(
      loadConfig({
        PORT: '65535',
        ACCESS_TOKEN_TTL_SECONDS: '60',
        EVENT_BUFFER_SIZE: '10',
        SYNTHESIS_CONCURRENCY: '0',
      }),
    ).toMatchObject({
      PORT: 65535,
      ACCESS_TOKEN_TTL_SECONDS: 60,
      EVENT_BUFFER_SIZE: 10,
      SYNTHESIS_CONCURRENCY: 0,
    });
  });

  it('needs the bootstrap username and password together', () => {
    for (const env of [{ AUTH_BOOTSTRAP_USERNAME: 'admin' }, { AUTH_BOOTSTRAP_PASSWORD: 'a long password' }]) {
      expect(refusal(env)).toContain('AUTH_BOOTSTRAP_USERNAME and AUTH_BOOTSTRAP_PASSWORD must be set together');
    }
  });

  it('keeps events at least as long as an access token lives, so revoked tokens stay revoked', () => {
    // The stream and the non-auth subgraphs find revocations in the event log: a shorter
    // retention would let a revoked token work again once its event is pruned.
    expect(refusal({ ACCESS_TOKEN_TTL_SECONDS: '7200', EVENT_RETENTION_SECONDS: '7199' })).toContain(
      'EVENT_RETENTION_SECONDS must be at least ACCESS_TOKEN_TTL_SECONDS',
    );
    expect(
      loadConfig({ ACCESS_TOKEN_TTL_SECONDS: '7200', EVENT_RETENTION_SECONDS: '7200' }).EVENT_RETENTION_SECONDS,
    ).toBe(7200);
  });

  it('lets no access token outlive its refresh token: a session with an expired refresh token counts as ended', () => {
    expect(refusal({ ACCESS_TOKEN_TTL_SECONDS: '7200', REFRESH_TOKEN_TTL_SECONDS: '3600' })).toContain(
      'REFRESH_TOKEN_TTL_SECONDS must be at least ACCESS_TOKEN_TTL_SECONDS',
    );
    expect(
      loadConfig({ ACCESS_TOKEN_TTL_SECONDS: '7200', REFRESH_TOKEN_TTL_SECONDS: '7200' }).REFRESH_TOKEN_TTL_SECONDS,
    ).toBe(7200);
  });

  it("hashes passwords with OWASP's argon2id memory (19 MiB) and takes less only in a test run", () => {
    expect(loadConfig({}).PASSWORD_HASH_MEMORY_KIB).toBe(19 * 1024);
    for (const env of [{}, { NODE_ENV: 'production' }, { NODE_ENV: 'development' }]) {
      expect(refusal({ ...env, PASSWORD_HASH_MEMORY_KIB: '19455' })).toContain(
        "PASSWORD_HASH_MEMORY_KIB must be at least 19456 (OWASP's minimum for argon2id) unless NODE_ENV=test",
      );
    }
    expect(loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_MEMORY_KIB: '1024' }).PASSWORD_HASH_MEMORY_KIB).toBe(1024);
    expect(loadConfig({ NODE_ENV: 'production', PASSWORD_HASH_MEMORY_KIB: '65536' }).PASSWORD_HASH_MEMORY_KIB).toBe(
      65536,
    );
    expect(refusal({ NODE_ENV: 'test', PASSWORD_HASH_MEMORY_KIB: '1023' })).toContain('PASSWORD_HASH_MEMORY_KIB');
  });

  it.each(['auth', 'auth=', '=http://a/graphql', 'auth=ftp://a/graphql', 'auth=a:4001/graphql'])(
    'refuses SUBGRAPH_URLS=%s',
    (pair) => {
      expect(refusal({ SUBGRAPH_URLS: `tts=http://t/graphql,${pair}` })).toContain(
        `SUBGRAPH_URLS: "${pair}" is not name=http(s)://host:port/graphql`,
      );
    },
  );
});

describe('the schema, value by value', () => {
  it('defaults', () => {
    expect(loadConfig({})).toMatchObject({
      HOST: '0.0.0.0',
      DATABASE_URL: 'sqlite',
      MIGRATIONS_RUN: true,
      LOG_LEVEL: 'info',
      TRUST_PROXY: 'false',
      BODY_LIMIT_BYTES: 256 * 1024,
      JWT_ISSUER: 'federated-auth-voice',
      REFRESH_TOKEN_TTL_SECONDS: 90 * 86_400,
      EVENT_RETENTION_SECONDS: 7 * 86_400,
      GRAPHQL_MAX_RESPONSE_BYTES: 16 * 1024 * 1024,
      GRAPHQL_MAX_AUDIO_BYTES: 4 * 1024 * 1024,
      SYNTHESIS_MAX_AUDIO_SECONDS: 3600,
      SYNTHESIS_RETENTION_SECONDS: 7 * 86_400,
      GATEWAY_URL: [],
      CORS_ORIGINS: [],
      graphqlExplorer: true,
      introspection: true,
    });
    expect(loadConfig({ NODE_ENV: 'production' })).toMatchObject({ graphqlExplorer: false, introspection: false });
  });

  it.each([
    ['BODY_LIMIT_BYTES', 64 * 1024 * 1024],
    ['REFRESH_TOKEN_TTL_SECONDS', 400 * 86_400],
    ['EVENT_RETENTION_SECONDS', 365 * 86_400],
    ['GRAPHQL_MAX_RESPONSE_BYTES', 1024 * 1024 * 1024],
    ['GRAPHQL_MAX_AUDIO_BYTES', 1024 * 1024 * 1024],
    ['SYNTHESIS_MAX_AUDIO_SECONDS', 6 * 3600],
    ['SYNTHESIS_RETENTION_SECONDS', 3650 * 86_400],
  ])('%s takes its largest value (%i) and refuses one more', (name, max) => {
    // EVENT_RETENTION_SECONDS must stay ≥ ACCESS_TOKEN_TTL_SECONDS; the largest values keep that.
    expect(loadConfig({ [name]: String(max) })[name as 'BODY_LIMIT_BYTES']).toBe(max);
    expect(refusal({ [name]: String(max + 1) })).toContain(name);
  });

  it.each([
    ['GRAPHQL_MAX_RESPONSE_BYTES', 16 * 1024],
    ['GRAPHQL_MAX_AUDIO_BYTES', 512 * 1024],
    ['BODY_LIMIT_BYTES', 1024],
  ])('%s takes its smallest value (%i) and refuses one less', (name, min) => {
    expect(loadConfig({ [name]: String(min) })[name as 'BODY_LIMIT_BYTES']).toBe(min);
    expect(refusal({ [name]: String(min - 1) })).toContain(name);
  });

  it('booleans are true/false, 1/0 or yes/no; anything else is refused', () => {
    for (const [text, value] of [
      ['true', true],
      ['1', true],
      ['yes', true],
      ['false', false],
      ['0', false],
      ['no', false],
    ] as const) {
      expect(loadConfig({ MIGRATIONS_RUN: text }).MIGRATIONS_RUN).toBe(value);
    }
    expect(refusal({ MIGRATIONS_RUN: 'maybe' })).toContain('MIGRATIONS_RUN');
  });

  it('DATABASE_URL is sqlite or a whole mysql:// URL, nothing around it', () => {
    expect(loadConfig({ DATABASE_URL: 'mysql://u:p@h:3306/x' }).DATABASE_URL).toBe('mysql://u:p@h:3306/x');
    for (const bad of ['mysql://', 'xsqlite', 'sqlitex', 'postgres://h/x', ' mysql://h']) {
      expect(refusal({ DATABASE_URL: bad })).toMatch(
        /DATABASE_URL.*must be "sqlite" or a mysql:\/\/user:password@host:port\[\/prefix\] URL/s,
      );
    }
  });

  it('bootstrap username 1–64 characters, password 8–1,024', () => {
    expect(
      loadConfig({ AUTH_BOOTSTRAP_USERNAME: 'a'.repeat(64), AUTH_BOOTSTRAP_PASSWORD: 'p'.repeat(1024) })
        .AUTH_BOOTSTRAP_USERNAME,
    ).toHaveLength(64);
    expect(refusal({ AUTH_BOOTSTRAP_USERNAME: 'a'.repeat(65), AUTH_BOOTSTRAP_PASSWORD: 'p'.repeat(8) })).toContain(
      'AUTH_BOOTSTRAP_USERNAME',
    );
    expect(refusal({ AUTH_BOOTSTRAP_USERNAME: 'a', AUTH_BOOTSTRAP_PASSWORD: 'p'.repeat(7) })).toContain(
      'AUTH_BOOTSTRAP_PASSWORD',
    );
    expect(
      loadConfig({ AUTH_BOOTSTRAP_USERNAME: 'a', AUTH_BOOTSTRAP_PASSWORD: 'p'.repeat(8) }).AUTH_BOOTSTRAP_PASSWORD,
    ).toHaveLength(8);
  });

  it('CORS origins: http or https, a host and port only, exactly; GATEWAY_URL http(s) URLs; SUBGRAPH_URLS name=http(s)://', () => {
    expect(loadConfig({ CORS_ORIGINS: 'http://a.test:8080,https://b.test' }).CORS_ORIGINS).toEqual([
      'http://a.test:8080',
      'https://b.test',
    ]);
    for (const bad of ['xhttp://a.test', 'https://a.test/', 'https://', 'ftp://a.test']) {
      expect(refusal({ CORS_ORIGINS: bad })).toMatch(/CORS_ORIGINS.*must be origins like https:\/\/app\.example/s);
    }
    expect(loadConfig({ GATEWAY_URL: 'http://g1:4000, http://g2:4000' }).GATEWAY_URL).toEqual([
      'http://g1:4000',
      'http://g2:4000',
    ]);
    expect(refusal({ GATEWAY_URL: 'not a url' })).toMatch(/GATEWAY_URL.*must be http\(s\) URLs, comma-separated/s);
    expect(loadConfig({ SUBGRAPH_URLS: 'auth=http://a:4001/graphql' }).subgraphUrls).toEqual({
      auth: 'http://a:4001/graphql',
    });
    expect(refusal({ SUBGRAPH_URLS: 'auth=xhttp://a:4001/graphql' })).toContain('SUBGRAPH_URLS');
  });

  it('takes a BLOB_STORE_URL on NATS or S3, and refuses anything else naming it', () => {
    expect(loadConfig({}).BLOB_STORE_URL).toBeUndefined();
    for (const url of [
      'nats://127.0.0.1:4222/blobs',
      'nats://a:4222,b:4222/blobs',
      'nats://user:pw@a:4222/my_blobs',
      's3://bucket',
      's3://bucket/prefix/deep?endpoint=http://127.0.0.1:9000&region=eu-west-1&force_path_style=true',
    ])
      expect(loadConfig({ BLOB_STORE_URL: url }).BLOB_STORE_URL).toBe(url);
    for (const url of [
      'file:///tmp',
      'nats://127.0.0.1:4222',
      'nats://127.0.0.1:4222/a/b',
      'nats://127.0.0.1:4222/bad.name',
      's3://bucket?endpoint=ftp://x',
      's3://bucket?force_path_style=maybe',
      's3://bucket?regoin=x',
      'not a url',
    ])
      expect(refusal({ BLOB_STORE_URL: url })).toContain('BLOB_STORE_URL');
  });
});
