// Configuration checking (lib/config.ts): the defaults the README lists, and a bad value named
// in the error. No database: the same on both jest projects.
import path from 'node:path';
import { ConfigError, loadConfig } from '../../lib/config';

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
      PORT: 8080, HOST: '0.0.0.0', DATA_DIR: './data', DATABASE_URL: 'sqlite', DATABASE_POOL_SIZE: 10, MIGRATIONS_RUN: true,
      LOG_LEVEL: 'info', TRUST_PROXY: 'loopback', BODY_LIMIT_BYTES: 262144, JWT_ISSUER: 'federated-auth-voice',
      ACCESS_TOKEN_TTL_SECONDS: 3600, REFRESH_TOKEN_TTL_SECONDS: 7776000,
      LOGIN_MAX_FAILURES_PER_USER: 5, LOGIN_MAX_ATTEMPTS_PER_CLIENT: 100, LOGIN_RATE_WINDOW_SECONDS: 900, RATE_LIMIT_STORE: 'database',
      EVENT_RETENTION_SECONDS: 604800, EVENT_POLL_MS: 50, EVENT_BUFFER_SIZE: 1000, EVENT_HEARTBEAT_SECONDS: 15,
      SYNTHESIS_CONCURRENCY: 1, SYNTHESIS_LEASE_SECONDS: 30, SYNTHESIS_MAX_ATTEMPTS: 3, SYNTHESIS_POLL_MS: 200,
      SYNTHESIS_MAX_AUDIO_SECONDS: 3600, SYNTHESIS_RETENTION_SECONDS: 604800,
      GATEWAY_URL: [], SUBGRAPH_URLS: [], SUBGRAPHS: [], subgraphUrls: {},
      dataDir: path.resolve('./data'), audioDir: path.resolve('./data/audio'),
    });
    // Optional settings stay unset rather than being invented.
    for (const key of ['JWT_PRIVATE_KEY', 'JWT_PUBLIC_KEY', 'AUTH_BOOTSTRAP_USERNAME', 'AUTH_BOOTSTRAP_PASSWORD', 'AUDIO_DIR', 'SUPERGRAPH_PATH']) {
      expect(config).not.toHaveProperty(key);
    }
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '', GATEWAY_URL: '' })).toMatchObject({ PORT: 8080, LOG_LEVEL: 'info', GATEWAY_URL: [] });
  });

  it('reads numbers, booleans, lists and paths', () => {
    const config = loadConfig({
      PORT: '0', DATA_DIR: '/srv/fav', AUDIO_DIR: '/mnt/audio', MIGRATIONS_RUN: 'no', DATABASE_URL: 'mysql://root@127.0.0.1:3306/shop',
      GATEWAY_URL: ' http://a:4000 , https://b:4000 ,', SUBGRAPHS: ' auth, ,tts ',
      SUBGRAPH_URLS: 'auth=http://127.0.0.1:4001/graphql, tts=https://tts.internal/graphql',
      AUTH_BOOTSTRAP_USERNAME: '  admin  ', AUTH_BOOTSTRAP_PASSWORD: 'a long password', RATE_LIMIT_STORE: 'memory',
    });
    expect(config).toMatchObject({
      PORT: 0, dataDir: '/srv/fav', audioDir: '/mnt/audio', MIGRATIONS_RUN: false, DATABASE_URL: 'mysql://root@127.0.0.1:3306/shop',
      GATEWAY_URL: ['http://a:4000', 'https://b:4000'], SUBGRAPHS: ['auth', 'tts'],
      subgraphUrls: { auth: 'http://127.0.0.1:4001/graphql', tts: 'https://tts.internal/graphql' },
      AUTH_BOOTSTRAP_USERNAME: 'admin', RATE_LIMIT_STORE: 'memory',
    });
    expect(loadConfig({ DATA_DIR: '/srv/fav' }).audioDir).toBe('/srv/fav/audio');
  });

  it.each([
    ['true', true], ['1', true], ['yes', true], ['false', false], ['0', false], ['no', false],
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
    expect(message.split('\n').slice(1).map((l) => l.trim().split(':')[0]).sort()).toEqual(['EVENT_POLL_MS', 'LOG_LEVEL', 'PORT']);
  });

  it('accepts the bounds themselves', () => {
    expect(loadConfig({ PORT: '65535', ACCESS_TOKEN_TTL_SECONDS: '60', EVENT_BUFFER_SIZE: '10', SYNTHESIS_CONCURRENCY: '0' })).toMatchObject({
      PORT: 65535, ACCESS_TOKEN_TTL_SECONDS: 60, EVENT_BUFFER_SIZE: 10, SYNTHESIS_CONCURRENCY: 0,
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
    expect(loadConfig({ ACCESS_TOKEN_TTL_SECONDS: '7200', EVENT_RETENTION_SECONDS: '7200' }).EVENT_RETENTION_SECONDS).toBe(7200);
  });

  it.each(['auth', 'auth=', '=http://a/graphql', 'auth=ftp://a/graphql', 'auth=a:4001/graphql'])('refuses SUBGRAPH_URLS=%s', (pair) => {
    expect(refusal({ SUBGRAPH_URLS: `tts=http://t/graphql,${pair}` })).toContain(`SUBGRAPH_URLS: "${pair}" is not name=http(s)://host:port/graphql`);
  });
});
