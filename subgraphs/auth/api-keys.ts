// API keys (CONTRACT.md "Admin: integrations", docs/integrations.md): made, listed and revoked
// here, and exchanged here for short-lived access tokens by the edge (lib/api-keys.ts). Only this
// subgraph reads them. A key is `fvk_` and 32 random bytes (base64url); the database holds its
// HMAC-SHA256 under API_KEY_HASH_SECRET (without it, a key derived from the token signing key), so
// a copy of the database gives no key. Lookup is by that hash's unique index: an unknown key and
// a wrong one are the same query and the same answer.
import { UserCaps } from '../../lib/kit/user-caps';
import crypto from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { IsNull, type DataSource } from 'typeorm';
import type { Config } from '../../lib/config';
import { affectedRows } from '../../lib/database/portable';
import { AppError, validationError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { API_KEY_PREFIX } from '../../lib/api-keys';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import { allScopes, isScope } from '../../lib/scopes';
import type { Principal, TokenSigner } from '../../lib/tokens';
import { auditedTransaction } from './audit';
import { ApiKey } from './entities/api-key';
import { User } from './entities/user';
import type { LoginThrottle } from './login-throttle';

const ORDER: PageOrder<ApiKey> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'ASC' };
/** `last_used_at` is written at most this often per key. */
const LAST_USED_WRITE_MS = 60_000;
/** Never held by a key: changing the account (password, sessions, keys) needs a person's login. */
export const NEVER_FOR_KEYS = 'account:write';

/**
 * The scopes a user holds now. Until roles and scopes (issue 30) are on main, from the roles:
 * administrators hold every scope, others every scope but the admin ones.
 */
export function scopesOfUser(user: Pick<User, 'roles'>): string[] {
  return user.roles.includes('admin') ? [...allScopes()] : allScopes().filter((s) => !s.startsWith('admin:'));
}

export interface CreatedApiKey {
  apiKey: ApiKey;
  key: string;
}

/** The counter of API_KEYS_PER_USER (lib/kit/user-caps.ts): keys not revoked. */
export const API_KEYS_CAP = 'API_KEYS_PER_USER';

export class ApiKeys {
  private readonly hashKey: Buffer;
  private readonly caps: UserCaps;

  constructor(
    private readonly config: Pick<Config, 'API_KEY_HASH_SECRET' | 'API_KEY_TOKEN_TTL_SECONDS' | 'API_KEYS_PER_USER'>,
    private readonly dataSource: DataSource,
    private readonly signer: TokenSigner,
    private readonly throttle: LoginThrottle,
    private readonly logger: Logger,
    signingKey: string,
    /** The owner's scopes from their roles (subgraphs/auth/roles.ts); custom roles included. */
    private readonly scopesOfRoles?: (roles: string[]) => Promise<string[]>,
  ) {
    this.caps = new UserCaps(dataSource);
    this.hashKey = config.API_KEY_HASH_SECRET
      ? Buffer.from(config.API_KEY_HASH_SECRET, 'utf8')
      : Buffer.from(crypto.hkdfSync('sha256', signingKey, 'api-keys', 'api key hash', 32));
  }

  private hash(key: string): string {
    return crypto.createHmac('sha256', this.hashKey).update(key).digest('hex');
  }

  async create(principal: Principal, name: string, scopes: string[], expiresInDays: number): Promise<CreatedApiKey> {
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length) throw validationError({ scopes: [`unknown scopes: ${unknown.join(', ')}`] });
    if (scopes.includes(NEVER_FOR_KEYS))
      throw validationError({ scopes: [`${NEVER_FOR_KEYS} is never given to an API key`] });
    const key = API_KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
    const now = new Date();
    const apiKey = this.dataSource.manager.create(ApiKey, {
      id: uuidv7(),
      userId: principal.userId,
      name: name.trim(),
      prefix: key.slice(0, API_KEY_PREFIX.length + 8),
      keyHash: this.hash(key),
      scopes: [...new Set(scopes)],
      createdAt: now,
      expiresAt: new Date(now.getTime() + expiresInDays * 86_400_000),
      lastUsedAt: null,
      revokedAt: null,
    });
    const cap = {
      limit: API_KEYS_CAP,
      max: this.config.API_KEYS_PER_USER,
      what: 'You hold the most API keys one may keep.',
    };
    await this.caps.prepare(principal.userId, [cap.limit]);
    await auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      const owner = await m.findOneBy(User, { id: principal.userId });
      if (!owner) throw new AppError('unauthorized');
      // A key holds only scopes its owner holds now, as a role grants only those (roles.ts): an
      // `admin:*` key of a plain user would start to work the day the user is promoted.
      const mine = new Set(this.scopesOfRoles ? await this.scopesOfRoles(owner.roles) : scopesOfUser(owner));
      const missing = apiKey.scopes.filter((s) => !mine.has(s));
      if (missing.length)
        throw new AppError('forbidden', `You cannot give a key scopes you do not hold: ${missing.join(', ')}.`, {
          scopes: missing,
        });
      // Keys not revoked count (expired ones too, until revoked).
      await this.caps.take(m, principal.userId, { cap });
      await m.insert(ApiKey, apiKey);
      await audit({
        type: 'api_key.created',
        userId: owner.id,
        resourceId: apiKey.id,
        username: owner.username,
        data: { api_key_id: apiKey.id, name: apiKey.name, prefix: apiKey.prefix, scopes: apiKey.scopes },
      });
    });
    return { apiKey, key };
  }

  /** The user's keys (revoked ones left out), oldest first; `userId` undefined: everyone's (administrators). */
  list(userId: string | undefined, limit: number, cursor?: string | null): Promise<Page<ApiKey>> {
    const query = this.dataSource.manager.createQueryBuilder(ApiKey, 'k').where('k.revokedAt IS NULL');
    if (userId) query.andWhere('k.userId = :userId', { userId });
    return pageOf(query, ORDER, limit, cursor);
  }

  /**
   * Revokes a key (`userId` undefined: any user's, administrators). Its tokens are refused by every
   * process within the revocation bound: the `session.revoked` event names the key's id, which is
   * the session id of the tokens it was exchanged for.
   */
  async revoke(principal: Principal, id: string, asAdmin: boolean): Promise<ApiKey> {
    return auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      const apiKey = await m.findOneBy(ApiKey, asAdmin ? { id } : { id, userId: principal.userId });
      if (!apiKey || apiKey.revokedAt) throw new AppError('not_found', 'No such API key.');
      const now = new Date();
      if (affectedRows(await m.update(ApiKey, { id, revokedAt: IsNull() }, { revokedAt: now })) !== 1)
        throw new AppError('not_found', 'No such API key.');
      await this.caps.release(m, apiKey.userId, API_KEYS_CAP);
      const owner = await m.findOneBy(User, { id: apiKey.userId });
      const username = owner?.username ?? '';
      const data = { api_key_id: id, name: apiKey.name, prefix: apiKey.prefix, revoked_by: principal.userId };
      await audit({ type: 'api_key.revoked', userId: apiKey.userId, resourceId: id, username, data });
      await audit({
        type: 'session.revoked',
        userId: apiKey.userId,
        resourceId: id,
        username,
        data: { session_id: id, reason: 'api_key_revoked' },
      });
      return { ...apiKey, revokedAt: now };
    });
  }

  /**
   * A key for a short-lived access token whose session is the key: scopes = the key's ∩ the
   * owner's current scopes, never account:write. A key that does not answer (unknown, wrong,
   * expired, revoked, its owner disabled) counts against the client's failures, in the login
   * limiter's store; past API_KEY_MAX_FAILURES_PER_CLIENT such keys from the client are refused
   * (429) until the window passes. A valid key is never refused by that count.
   */
  async exchange(key: string, clientIp: string): Promise<{ accessToken: string; expiresIn: number }> {
    // The key is looked up first: a valid key is served whatever failed from its address before.
    // Refusing the address first let 20 bogus keys from a shared address (a NAT, a proxy) lock
    // every valid key behind it out for the window (issue 41). Keys are 32 random bytes, so the
    // limit is not what stops guessing: it slows a scanner (429 instead of 401) and keeps its
    // noise bounded. One lookup by a unique index is what a refusal cost anyway.
    const apiKey = await this.dataSource.manager.findOneBy(ApiKey, { keyHash: this.hash(key) });
    const owner = apiKey && (await this.dataSource.manager.findOneBy(User, { id: apiKey.userId }));
    const now = Date.now();
    if (!apiKey || !owner || owner.disabled || apiKey.revokedAt || apiKey.expiresAt.getTime() <= now) {
      await this.throttle.checkKeyGuesses(clientIp);
      await this.throttle.keyGuessFailed(clientIp);
      throw new AppError('unauthorized', 'The API key is invalid, expired or revoked.');
    }
    if (!apiKey.lastUsedAt || now - apiKey.lastUsedAt.getTime() >= LAST_USED_WRITE_MS)
      await this.dataSource.manager.update(ApiKey, { id: apiKey.id }, { lastUsedAt: new Date(now) });
    const held = new Set(this.scopesOfRoles ? await this.scopesOfRoles(owner.roles) : scopesOfUser(owner));
    const scopes = apiKey.scopes.filter((s) => held.has(s) && s !== NEVER_FOR_KEYS);
    // The owner's roles, but `admin` only where the key holds an admin scope (scopes are carried
    // for the pipeline's scope step; until it enforces them, roles are what fields check).
    const roles = owner.roles.filter((r) => r !== 'admin' || scopes.some((s) => s.startsWith('admin:')));
    const ttl = Math.min(this.config.API_KEY_TOKEN_TTL_SECONDS, Math.ceil((apiKey.expiresAt.getTime() - now) / 1000));
    const token = this.signer.sign({ userId: owner.id, sessionId: apiKey.id, roles, scopes }, 'access', ttl, {
      api_key: true,
    });
    return { accessToken: token.token, expiresIn: ttl };
  }

  /** Whether a token's session is a live key of its user (auth's own check of each request). */
  async liveKey(principal: Principal): Promise<boolean> {
    const apiKey = await this.dataSource.manager.findOneBy(ApiKey, { id: principal.sessionId });
    return Boolean(
      apiKey && apiKey.userId === principal.userId && !apiKey.revokedAt && apiKey.expiresAt.getTime() > Date.now(),
    );
  }
}
