// Login rate limits (CONTRACT.md): failed attempts per username + client address, and all
// attempts per client address. Counts live in the auth database so that every instance
// shares them (RATE_LIMIT_STORE=memory keeps them per process).
//
// An attempt is counted as a failure *before* its password is verified, and the count is given
// back once it turns out right: checking the count first and recording the failure after the
// (slow) verification let every concurrent attempt through the check. consume() is one atomic
// upsert on either store, so of N concurrent attempts at most LOGIN_MAX_FAILURES_PER_USER get
// as far as argon2.
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

/** consume(), with a refusal turned into rate_limit_exceeded (store errors pass through). */
async function take(limiter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (res) {
    if (res instanceof RateLimiterRes) throw tooMany(res);
    throw res;
  }
}

/** One login attempt let through to the password check; settle it with succeeded() or failed(). */
export interface LoginAttempt {
  /** The password was right: the username's failures are cleared (this attempt included). */
  succeeded(): Promise<void>;
  /** It was not checked after all (the database failed): its point is given back. */
  abandoned(): Promise<void>;
}

export class LoginThrottle {
  private constructor(
    private readonly failures: RateLimiterAbstract,
    private readonly attempts: RateLimiterAbstract,
  ) {}

  static async create(config: Config, dataSource: DataSource): Promise<LoginThrottle> {
    const [failures, attempts] = await Promise.all([
      createLimiter(config, dataSource, 'login_fail', config.LOGIN_MAX_FAILURES_PER_USER),
      createLimiter(config, dataSource, 'login_ip', config.LOGIN_MAX_ATTEMPTS_PER_CLIENT),
    ]);
    return new LoginThrottle(failures, attempts);
  }

  private static userKey(usernameKey: string, clientIp: string) {
    return `${usernameKey}|${clientIp}`;
  }

  /**
   * Counts the attempt against both limits before anything is checked; throws
   * rate_limit_exceeded (with Retry-After) when either is used up. A wrong password then needs
   * nothing more: its point stays.
   */
  async attempt(usernameKey: string, clientIp: string): Promise<LoginAttempt> {
    const userKey = LoginThrottle.userKey(usernameKey, clientIp);
    await take(this.failures, userKey);
    try {
      await take(this.attempts, clientIp);
    } catch (err) {
      // Refused by the address limit: this attempt is not checked, so it is no failure.
      await this.failures.reward(userKey, 1);
      throw err;
    }
    return {
      succeeded: async () => {
        await this.failures.delete(userKey);
      },
      abandoned: async () => {
        await this.failures.reward(userKey, 1);
      },
    };
  }
}

function tooMany(res: RateLimiterRes): AppError {
  return new AppError('rate_limit_exceeded', 'Too many login attempts; try again later.', undefined, retryAfterSeconds(res));
}
