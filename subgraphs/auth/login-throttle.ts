// Login rate limits (CONTRACT.md): failed attempts per username + client address, failed
// attempts per username from any address (so that spreading guesses over many addresses does not
// help: past LOGIN_MAX_FAILURES_PER_USERNAME the username is locked until the window passes or an
// administrator unlocks it), and failed attempts per client address (whatever the usernames). Counts live in the auth database so that every instance
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
import { nativeClient } from '../../lib/database/driver';
import { AppError } from '../../lib/errors';

function createLimiter(config: Config, dataSource: DataSource, keyPrefix: string, points: number): RateLimiterAbstract {
  const base = { keyPrefix, points, duration: config.LOGIN_RATE_WINDOW_SECONDS };
  if (config.RATE_LIMIT_STORE === 'memory') return new RateLimiterMemory(base);
  const client = nativeClient(dataSource);
  // The table is the auth migrations' (utf8mb4 keys on MySQL), not the library's own: nothing to wait for.
  const opts: IRateLimiterStoreOptions = {
    ...base,
    tableName: 'rate_limits',
    tableCreated: true,
    storeClient: undefined,
  };
  return 'mysqlPool' in client
    ? new RateLimiterMySQL({
        ...opts,
        storeClient: client.mysqlPool,
        storeType: 'pool',
        dbName: dataSource.options.database as string,
      })
    : new RateLimiterSQLite({
        ...opts,
        storeClient: client.sqlite,
        storeType: 'better-sqlite3',
      });
}

const FAILURE_PREFIX = 'login_fail';
const USERNAME_PREFIX = 'login_user';

const retryAfterSeconds = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** consume(), with a refusal turned into rate_limit_exceeded (store errors pass through). */
async function take(limiter: RateLimiterAbstract, key: string): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(key);
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
  /** Left unsettled (a wrong password), this attempt is the one that locks the username, from this address or from all (the `login.locked` audit event). */
  readonly locksIfWrong: boolean;
  /** Seconds until the failures of the lock it sets expire. */
  readonly retryAfter: number;
}

export class LoginThrottle {
  /** Memory store only: the client addresses with failures of each username, for unlock(). */
  private readonly failedFrom = new Map<string, Set<string>>();

  private constructor(
    /** Failures per username + client address. */
    private readonly failures: RateLimiterAbstract,
    /** Failures per username from any address. */
    private readonly usernameFailures: RateLimiterAbstract,
    /** All attempts per client address. */
    private readonly attempts: RateLimiterAbstract,
    private readonly maxFailures: number,
    private readonly maxUsernameFailures: number,
    /** The database store's connection (unlock() reads its rows); undefined for the memory store. */
    private readonly dataSource?: DataSource,
    /** API keys that did not answer (unknown, expired, revoked) per client address. */
    private readonly keyGuesses?: RateLimiterAbstract,
  ) {}

  /**
   * Refuses (429) a client whose API-key failures reached API_KEY_MAX_FAILURES_PER_CLIENT in the
   * window. Asked only for a key that did not answer: a valid key is never refused by it.
   */
  async checkKeyGuesses(clientIp: string): Promise<void> {
    const res = await this.keyGuesses?.get(clientIp);
    if (res && res.remainingPoints <= 0) throw tooMany(res);
  }

  /** One more API-key failure of the client. */
  async keyGuessFailed(clientIp: string): Promise<void> {
    await this.keyGuesses?.penalty(clientIp, 1);
  }

  /** A Promise, so that a store needing setup can be awaited by callers; none does today. */
  static create(config: Config, dataSource: DataSource): Promise<LoginThrottle> {
    const failures = createLimiter(config, dataSource, FAILURE_PREFIX, config.LOGIN_MAX_FAILURES_PER_USER);
    const usernameFailures = createLimiter(config, dataSource, USERNAME_PREFIX, config.LOGIN_MAX_FAILURES_PER_USERNAME);
    const attempts = createLimiter(config, dataSource, 'login_ip', config.LOGIN_MAX_ATTEMPTS_PER_CLIENT);
    const throttle = new LoginThrottle(
      failures,
      usernameFailures,
      attempts,
      config.LOGIN_MAX_FAILURES_PER_USER,
      config.LOGIN_MAX_FAILURES_PER_USERNAME,
      config.RATE_LIMIT_STORE === 'memory' ? undefined : dataSource,
      createLimiter(config, dataSource, 'apikey_fail', config.API_KEY_MAX_FAILURES_PER_CLIENT),
    );
    return Promise.resolve(throttle);
  }

  private static userKey(usernameKey: string, clientIp: string) {
    return `${usernameKey}|${clientIp}`;
  }

  /**
   * Counts the attempt against every limit before anything is checked; throws
   * rate_limit_exceeded (with Retry-After) when one is used up. A wrong password then needs
   * nothing more: its points stay.
   */
  async attempt(usernameKey: string, clientIp: string): Promise<LoginAttempt> {
    const userKey = LoginThrottle.userKey(usernameKey, clientIp);
    const counted = await take(this.failures, userKey);
    let acrossAddresses: RateLimiterRes;
    try {
      acrossAddresses = await take(this.usernameFailures, usernameKey);
    } catch (err) {
      // Refused by a later limit: this attempt is not checked, so it is no failure.
      await this.failures.reward(userKey, 1);
      throw err;
    }
    try {
      await take(this.attempts, clientIp);
    } catch (err) {
      await Promise.all([this.failures.reward(userKey, 1), this.usernameFailures.reward(usernameKey, 1)]);
      throw err;
    }
    if (!this.dataSource) this.remember(usernameKey, clientIp);
    const locksHere = counted.consumedPoints === this.maxFailures;
    const locksEverywhere = acrossAddresses.consumedPoints === this.maxUsernameFailures;
    return {
      locksIfWrong: locksHere || locksEverywhere,
      retryAfter: retryAfterSeconds(locksEverywhere ? acrossAddresses : counted),
      // The username's failures from this address are cleared; from all addresses only this
      // attempt's point is given back: the owner's login must not wipe out an attacker's count.
      // The address's point is given back too: the per-address limit counts failures, so that
      // the people behind one address (an office's NAT) are not refused for logging in
      // (issue 41; docs/login-limits-and-sessions.md).
      succeeded: async () => {
        await Promise.all([
          this.failures.delete(userKey),
          this.usernameFailures.reward(usernameKey, 1),
          this.attempts.reward(clientIp, 1),
        ]);
      },
      abandoned: async () => {
        await Promise.all([this.failures.reward(userKey, 1), this.usernameFailures.reward(usernameKey, 1)]);
      },
    };
  }

  /** Clears the failures of a username from every client address, and its lock across addresses (an administrator's unlock). */
  async unlock(usernameKey: string): Promise<void> {
    await this.usernameFailures.delete(usernameKey);
    let addresses: string[];
    if (this.dataSource) {
      // The limiter's rows are `login_fail:<username>|<address>`; addresses hold no '|'.
      const prefix = `${FAILURE_PREFIX}:${usernameKey}|`;
      const rows: { key: string }[] = await this.dataSource.query(
        "SELECT `key` AS `key` FROM rate_limits WHERE `key` LIKE ? ESCAPE '!'",
        [`${prefix.replace(/[!%_]/g, '!$&')}%`],
      );
      addresses = rows
        .map((r) => r.key)
        .filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes('|'))
        .map((k) => k.slice(prefix.length));
    } else {
      addresses = [...(this.failedFrom.get(usernameKey) ?? [])];
      this.failedFrom.delete(usernameKey);
    }
    for (const address of addresses) await this.failures.delete(LoginThrottle.userKey(usernameKey, address));
  }

  /** Memory store: which addresses a username was tried from (bounded: the oldest names go first). */
  private remember(usernameKey: string, clientIp: string): void {
    let from = this.failedFrom.get(usernameKey);
    if (!from) {
      if (this.failedFrom.size >= 10_000) this.failedFrom.delete(this.failedFrom.keys().next().value!);
      this.failedFrom.set(usernameKey, (from = new Set()));
    }
    from.add(clientIp);
  }
}

function tooMany(res: RateLimiterRes): AppError {
  return new AppError(
    'rate_limit_exceeded',
    'Too many login attempts; try again later.',
    undefined,
    retryAfterSeconds(res),
  );
}
