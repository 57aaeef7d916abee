// The Auth module's rules: users, login, sessions and their tokens, a person's own account.
import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ConfigError, type Config } from '../../lib/config';
import { affectedRows } from '../../lib/database/portable';
import { rowReader } from '../../lib/database/reads';
import { AppError, validationError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import type { SubgraphContext } from '../../lib/subgraph';
import { Principal, TokenSigner, TokenVerifier } from '../../lib/tokens';
import { auditedTransaction } from './audit';
import { Session, SessionState } from './entities/session';
import { User } from './entities/user';
import type { LoginAttempt, LoginThrottle } from './login-throttle';
import { decoyHash, hashPassword, verifyPassword } from './passwords';
import { passwordProblems } from './password-policy';
import {
  RevokeReason,
  revokeSessions,
  revokeSessionsOverQuota,
  revokeUserSessions,
  revokeUserSessionsBatch,
} from './sessions';
import { createUser, usernameKey } from './users';
import type { RoleAdministration } from './roles';

export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  tokenType: 'Bearer';
  sessionId: string;
}

/** Where a request comes from, as the subgraph saw it. */
export interface Client {
  ip: string;
  userAgent?: string;
}

/** Activity is written at most this often per session. */
const ACTIVITY_WRITE_INTERVAL_MS = 60_000;

const BAD_CREDENTIALS = 'The username or password is wrong.';

/** Sessions newest first; the id orders sessions created in the same millisecond. */
const SESSION_ORDER: PageOrder<Session> = {
  keys: [
    { property: 'createdAt', kind: 'time' },
    { property: 'id', kind: 'uuid' },
  ],
  direction: 'DESC',
};

export class AuthService {
  private decoy?: Promise<string>;
  /** A session by id as plain SQL: every authenticated request reads one. */
  private readonly readSession = rowReader(this.dataSource, Session);

  constructor(
    private readonly config: Config,
    private readonly dataSource: DataSource,
    private readonly signer: TokenSigner,
    private readonly verifier: TokenVerifier,
    private readonly throttle: LoginThrottle,
    private readonly logger: Logger,
    private readonly roles: RoleAdministration,
  ) {}

  // ---- users -------------------------------------------------------------------------

  /** Creates the configured bootstrap admin unless a user of that name exists; the new user, if it made one. */
  async ensureBootstrapUser(): Promise<User | undefined> {
    const { AUTH_BOOTSTRAP_USERNAME: username, AUTH_BOOTSTRAP_PASSWORD: password } = this.config;
    if (!username || !password) return undefined;
    const exists = await this.dataSource.manager.existsBy(User, { usernameKey: usernameKey(username) });
    if (exists) return undefined;
    try {
      return await createUser(this.dataSource, {
        username,
        password,
        roles: ['admin'],
        minScore: this.config.PASSWORD_MIN_SCORE,
        hashCost: this.config,
        createdBy: 'bootstrap',
      });
    } catch (err) {
      // Another instance starting at the same moment created it.
      if (err instanceof AppError && err.code === 'conflict') return undefined;
      if (err instanceof AppError && err.code === 'validation_error') {
        const problems = Object.values(err.details ?? {})
          .flat()
          .join('; ');
        throw new ConfigError(`Invalid configuration:\n  AUTH_BOOTSTRAP_PASSWORD: ${problems}`);
      }
      throw err;
    }
  }

  findUser(id: string): Promise<User | null> {
    return this.dataSource.manager.findOneBy(User, { id });
  }

  // ---- login and tokens ----------------------------------------------------------------

  async login(username: string, password: string, client: Client): Promise<TokenSet> {
    const key = usernameKey(username);
    // Counted as a failure before the password is checked, given back when it is right.
    const attempt = await this.throttle.attempt(key, client.ip);
    let user: User | null;
    let ok: boolean;
    try {
      user = await this.dataSource.manager.findOneBy(User, { usernameKey: key });
      // Unknown users are checked against a decoy hash: same answer, about the same time.
      ok = await verifyPassword(user?.passwordHash ?? (await (this.decoy ??= decoyHash(this.config))), password);
    } catch (err) {
      await attempt.abandoned().catch(() => undefined);
      throw err;
    }
    // A disabled user gets the wrong password's answer, and it counts as a failure like one:
    // nothing tells an attacker that the password was right.
    if (!user || !ok || user.disabled) {
      await this.loginFailed(
        attempt,
        username.trim(),
        user,
        client,
        !user ? 'unknown_user' : !ok ? 'wrong_password' : 'disabled',
      );
      throw new AppError('unauthorized', BAD_CREDENTIALS);
    }
    await attempt.succeeded();

    const sessionId = crypto.randomUUID();
    const { tokens, access, refresh } = this.issueTokens(
      user.id,
      sessionId,
      user.roles,
      await this.roles.scopesOfRoles(user.roles),
    );
    const now = new Date();
    const started = await auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      // Only while the user may log in with the password just verified: a disable or a password
      // change committed since the read above wins (the row no longer matches), and one after this
      // commit sees (and revokes) the new session. Both write this row first, so they wait for us.
      const allowed = await m.update(
        User,
        { id: user.id, disabled: false, passwordHash: user.passwordHash },
        { lastLoginAt: now },
      );
      if (affectedRows(allowed) !== 1) return false;
      await m.insert(Session, {
        id: sessionId,
        userId: user.id,
        storedState: 'active',
        createdAt: now,
        lastActivityAt: now,
        expiresAt: access.expiresAt,
        refreshTokenId: refresh.tokenId,
        refreshExpiresAt: refresh.expiresAt,
        revokedAt: null,
        userAgent: client.userAgent ? client.userAgent.slice(0, 512) : null,
        ipAddress: client.ip ? client.ip.slice(0, 64) : null,
      });
      await audit({
        type: 'session.created',
        userId: user.id,
        resourceId: sessionId,
        username: user.username,
        data: { session_id: sessionId, user_id: user.id, client_address: client.ip },
      });
      await revokeSessionsOverQuota(m, audit, user, sessionId, this.config.MAX_SESSIONS_PER_USER);
      return true;
    });
    if (!started) throw new AppError('unauthorized', BAD_CREDENTIALS);
    return tokens;
  }

  /** A failed login (or password check): counted toward the limits, and audited. */
  /** A failed login (or password check): its attempt stays counted (the throttle counted it first); audited. */
  private async loginFailed(
    attempt: LoginAttempt,
    username: string,
    user: User | null,
    client: Client,
    reason: string,
  ): Promise<void> {
    await auditedTransaction(this.dataSource, this.logger, async (_m, audit) => {
      const who = {
        userId: user?.id ?? '',
        resourceId: user?.id ?? usernameKey(username).slice(0, 64),
        username: user?.username ?? username,
      };
      await audit({ type: 'login.failed', ...who, data: { client_address: client.ip, reason } });
      if (attempt.locksIfWrong)
        await audit({
          type: 'login.locked',
          ...who,
          data: { client_address: client.ip, retry_after_seconds: attempt.retryAfter },
        });
    });
  }

  /** Rotation: the presented refresh token is spent; presenting a spent one revokes the session. */
  async refresh(refreshToken: string, client: Client): Promise<TokenSet> {
    const claims = await this.verifier.verifyToken(refreshToken, 'refresh');
    const session = await this.dataSource.manager.findOneBy(Session, { id: claims.sessionId });
    if (!session || session.userId !== claims.userId || session.state !== SessionState.active) {
      throw new AppError('unauthorized', 'The refresh token is no longer valid.');
    }
    const user = await this.findUser(session.userId);
    if (!user || user.disabled) throw new AppError('unauthorized', 'The refresh token is no longer valid.');
    const { tokens, access, refresh } = this.issueTokens(
      user.id,
      session.id,
      user.roles,
      await this.roles.scopesOfRoles(user.roles),
    );
    const rotated = await auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      const result = await m.update(
        Session,
        { id: session.id, refreshTokenId: claims.tokenId, storedState: 'active' },
        {
          refreshTokenId: refresh.tokenId,
          expiresAt: access.expiresAt,
          refreshExpiresAt: refresh.expiresAt,
          lastActivityAt: new Date(),
        },
      );
      if (affectedRows(result) !== 1) {
        // A refresh token that was already exchanged: someone else may hold it. End the session.
        await audit({
          type: 'refresh.reused',
          userId: user.id,
          resourceId: session.id,
          username: user.username,
          data: { session_id: session.id, client_address: client.ip },
        });
        await revokeSessions(m, audit, [session.id], user, 'refresh_reused');
        return false;
      }
      await audit({
        type: 'session.refreshed',
        userId: user.id,
        resourceId: session.id,
        username: user.username,
        data: { session_id: session.id },
      });
      return true;
    });
    if (!rotated) throw new AppError('unauthorized', 'The refresh token was already used; the session is revoked.');
    return tokens;
  }

  async logout(principal: Principal): Promise<Session> {
    // A key's token has no session to end (its session id is the key's): it was a 500.
    if (principal.apiKey)
      throw new AppError(
        'forbidden',
        'An API key has no session to log out of; its owner revokes the key after logging in (DELETE /api/v1/auth/api-keys/{keyId}).',
      );
    await this.revoke(principal, principal.sessionId, 'logout');
    return (await this.dataSource.manager.findOneBy(Session, { id: principal.sessionId }))!;
  }

  private async revoke(principal: Principal, sessionId: string, reason: RevokeReason): Promise<void> {
    const user = await this.findUser(principal.userId);
    if (!user) throw new AppError('unauthorized', 'The session has ended.');
    await auditedTransaction(this.dataSource, this.logger, (m, audit) =>
      revokeSessions(m, audit, [sessionId], user, reason),
    );
  }

  /** The access token carries the user's scopes as issued (a later change reaches it through the event log). */
  private issueTokens(userId: string, sessionId: string, roles: string[], scopes: string[]) {
    const claims = { userId, sessionId, roles, scopes };
    const access = this.signer.sign(claims, 'access', this.config.ACCESS_TOKEN_TTL_SECONDS);
    const refresh = this.signer.sign(claims, 'refresh', this.config.REFRESH_TOKEN_TTL_SECONDS);
    const tokens: TokenSet = {
      accessToken: access.token,
      refreshToken: refresh.token,
      expiresIn: this.config.ACCESS_TOKEN_TTL_SECONDS,
      tokenType: 'Bearer',
      sessionId,
    };
    return { tokens, access, refresh };
  }

  // ---- sessions ------------------------------------------------------------------------

  /** The caller's session, read once per request; also keeps last_activity_at moving. */
  activeSession(principal: Principal, ctx: SubgraphContext): Promise<Session> {
    const key = `session:${principal.sessionId}`;
    let pending = ctx.memo.get(key) as Promise<Session> | undefined;
    if (!pending) {
      pending = this.loadActiveSession(principal);
      ctx.memo.set(key, pending);
    }
    return pending;
  }

  private async loadActiveSession(principal: Principal): Promise<Session> {
    const session = await this.readSession(principal.sessionId);
    if (!session || session.userId !== principal.userId || session.state !== SessionState.active) {
      throw new AppError('unauthorized', 'The session has ended.');
    }
    const now = Date.now();
    if (now - session.lastActivityAt.getTime() >= ACTIVITY_WRITE_INTERVAL_MS) {
      const at = new Date(now);
      await this.dataSource.manager.update(Session, { id: session.id }, { lastActivityAt: at });
      session.lastActivityAt = at;
    }
    return session;
  }

  /** A session of the caller; another user's is `not_found`, as if it did not exist. */
  async sessionOf(principal: Principal, sessionId: string): Promise<Session> {
    const session = await this.readSession(sessionId);
    if (!session || session.userId !== principal.userId) {
      throw new AppError('not_found', 'No such session.');
    }
    return session;
  }

  /** The caller's active sessions, newest first, `limit` at a time after the cursor. */
  listSessions(principal: Principal, limit: number, cursor?: string | null): Promise<Page<Session>> {
    const qb = this.dataSource.manager
      .createQueryBuilder(Session, 's')
      .where('s.userId = :userId', { userId: principal.userId })
      .andWhere("s.storedState = 'active'")
      .andWhere('s.refreshExpiresAt > :now', { now: new Date() });
    return pageOf(qb, SESSION_ORDER, limit, cursor);
  }

  /** Revokes one of the caller's sessions (their current one too, if they name it). */
  async revokeSession(principal: Principal, sessionId: string): Promise<Session> {
    await this.sessionOf(principal, sessionId);
    await this.revoke(principal, sessionId, 'revoked_by_user');
    return this.sessionOf(principal, sessionId);
  }

  /**
   * Revokes every session of the caller but the one making the request, created before this
   * request: in batches, each its own short transaction (the quota bounds them; sessions from
   * before the quota may be many). How many it ended.
   */
  async revokeOtherSessions(principal: Principal): Promise<number> {
    const user = await this.findUser(principal.userId);
    if (!user) throw new AppError('unauthorized', 'The session has ended.');
    const asked = new Date();
    let total = 0;
    for (let more = true; more;) {
      const batch = await auditedTransaction(this.dataSource, this.logger, (m, audit) =>
        revokeUserSessionsBatch(m, audit, user, 'revoked_by_user', principal.sessionId, asked),
      );
      total += batch.revoked;
      more = batch.more;
    }
    return total;
  }

  /**
   * A new password for the caller, who proves the current one. A wrong one counts toward the
   * login limits of that username and address, like a failed login. Every other session ends.
   */
  async changePassword(
    principal: Principal,
    currentPassword: string,
    newPassword: string,
    client: Client,
  ): Promise<User> {
    const user = await this.findUser(principal.userId);
    if (!user) throw new AppError('unauthorized', 'The session has ended.');
    // The same limits as a login: counted before the check, given back when right.
    const attempt = await this.throttle.attempt(user.usernameKey, client.ip);
    let ok: boolean;
    try {
      ok = await verifyPassword(user.passwordHash, currentPassword);
    } catch (err) {
      await attempt.abandoned().catch(() => undefined);
      throw err;
    }
    if (!ok) {
      await this.loginFailed(attempt, user.username, user, client, 'wrong_current_password');
      throw new AppError('unauthorized', 'The current password is wrong.', { currentPassword: ['is wrong'] });
    }
    await attempt.succeeded();
    const problems = passwordProblems(newPassword, this.config.PASSWORD_MIN_SCORE, [user.username]);
    if (problems.length) throw validationError({ newPassword: problems });
    const passwordHash = await hashPassword(newPassword, this.config);
    const changed = await auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      // Compare-and-set on the old hash: of two concurrent changes, one wins; the other must retry.
      const result = await m
        .createQueryBuilder()
        .update(User)
        .set({ passwordHash, version: () => 'version + 1' })
        .where('id = :id AND password_hash = :old', { id: user.id, old: user.passwordHash })
        .execute();
      if (affectedRows(result) !== 1) return false;
      await audit({
        type: 'password.changed',
        userId: user.id,
        resourceId: user.id,
        username: user.username,
        data: { user_id: user.id, by: user.id, session_id: principal.sessionId },
      });
      await revokeUserSessions(m, audit, user, 'password_changed', principal.sessionId);
      return true;
    });
    if (!changed)
      throw new AppError('conflict', 'The password was changed at the same moment by another request; try again.');
    return (await this.findUser(user.id))!;
  }
}
