// Login rate limits (CONTRACT.md): failed attempts per username + client address, and all
// attempts per client address. Counts live in the auth database so that every instance
// shares them (RATE_LIMIT_STORE=memory keeps them per process).
import {
  IRateLimiterStoreOptions,
  RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterMySQL,
  RateLimiterRes,
  RateLimiterSQLite,
} from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import type { Config } from '../../lib/config';
import { AppError } from '../../lib/errors';

async function createLimiter(config: Config, dataSource: DataSource, keyPrefix: string, points: number): Promise<RateLimiterAbstract> {
  const base = { keyPrefix, points, duration: config.LOGIN_RATE_WINDOW_SECONDS };
  if (config.RATE_LIMIT_STORE === 'memory') return new RateLimiterMemory(base);
  const driver = dataSource.driver as unknown as { pool?: unknown; databaseConnection?: unknown };
  return new Promise((resolve, reject) => {
    const ready = (err?: Error) => (err ? reject(err) : resolve(limiter));
    const opts: IRateLimiterStoreOptions = { ...base, tableName: 'rate_limits', storeClient: undefined };
    const limiter =
      dataSource.options.type === 'mysql'
        ? new RateLimiterMySQL({ ...opts, storeClient: driver.pool, storeType: 'pool', dbName: dataSource.options.database as string }, ready)
        : new RateLimiterSQLite({ ...opts, storeClient: driver.databaseConnection, storeType: 'better-sqlite3' } as IRateLimiterStoreOptions, ready);
  });
}

const retryAfterSeconds = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

export class LoginThrottle {
  private constructor(
    private readonly failures: RateLimiterAbstract,
    private readonly attempts: RateLimiterAbstract,
    private readonly maxFailures: number,
  ) {}

  static async create(config: Config, dataSource: DataSource): Promise<LoginThrottle> {
    const [failures, attempts] = await Promise.all([
      createLimiter(config, dataSource, 'login_fail', config.LOGIN_MAX_FAILURES_PER_USER),
      createLimiter(config, dataSource, 'login_ip', config.LOGIN_MAX_ATTEMPTS_PER_CLIENT),
    ]);
    return new LoginThrottle(failures, attempts, config.LOGIN_MAX_FAILURES_PER_USER);
  }

  private static userKey(usernameKey: string, clientIp: string) {
    return `${usernameKey}|${clientIp}`;
  }

  /** Throws rate_limit_exceeded when this attempt may not even be tried. */
  async beforeAttempt(usernameKey: string, clientIp: string): Promise<void> {
    const failed = await this.failures.get(LoginThrottle.userKey(usernameKey, clientIp));
    if (failed && failed.consumedPoints >= this.maxFailures) throw tooMany(failed);
    try {
      await this.attempts.consume(clientIp);
    } catch (res) {
      if (res instanceof RateLimiterRes) throw tooMany(res);
      throw res;
    }
  }

  async failed(usernameKey: string, clientIp: string): Promise<void> {
    await this.failures.penalty(LoginThrottle.userKey(usernameKey, clientIp), 1);
  }

  async succeeded(usernameKey: string, clientIp: string): Promise<void> {
    await this.failures.delete(LoginThrottle.userKey(usernameKey, clientIp));
  }
}

function tooMany(res: RateLimiterRes): AppError {
  return new AppError('rate_limit_exceeded', 'Too many login attempts; try again later.', undefined, retryAfterSeconds(res));
}
