// The Auth module's rules: users, login, sessions and their tokens.
import crypto from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { Config } from '../../lib/config';
import { affectedRows, inTransaction, rowReader } from '../../lib/database';
import { AppError } from '../../lib/errors';
import { recordEvent } from '../../lib/outbox';
import type { SubgraphContext } from '../../lib/subgraph';
import { Principal, TokenSigner, TokenVerifier } from '../../lib/tokens';
import { Session, SessionState } from './entities/session';
import { User } from './entities/user';
import { createUser, usernameKey } from './users';
import type { LoginThrottle } from './login-throttle';
import { decoyHash, verifyPassword } from './passwords';

export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  tokenType: 'Bearer';
  sessionId: string;
}

/** Activity is written at most this often per session. */
const ACTIVITY_WRITE_INTERVAL_MS = 60_000;

const BAD_CREDENTIALS = 'The username or password is wrong.';

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
  ) {}

  // ---- users -------------------------------------------------------------------------

  createUser(username: string, password: string, roles: string[]): Promise<User> {
    return createUser(this.dataSource, username, password, roles);
  }

  /** Creates the configured bootstrap admin unless a user of that name exists; the new user, if it made one. */
  async ensureBootstrapUser(): Promise<User | undefined> {
    const { AUTH_BOOTSTRAP_USERNAME: username, AUTH_BOOTSTRAP_PASSWORD: password } = this.config;
    if (!username || !password) return undefined;
    const exists = await this.dataSource.manager.existsBy(User, { usernameKey: usernameKey(username) });
    if (exists) return undefined;
    try {
      return await this.createUser(username, password, ['admin']);
    } catch (err) {
      // Another instance starting at the same moment created it.
      if (!(err instanceof AppError && err.code === 'conflict')) throw err;
      return undefined;
    }
  }

  findUser(id: string): Promise<User | null> {
    return this.dataSource.manager.findOneBy(User, { id });
  }

  // ---- login and tokens ----------------------------------------------------------------

  async login(username: string, password: string, clientIp: string): Promise<TokenSet> {
    const key = usernameKey(username);
    // Counted as a failure before the password is checked, given back when it is right.
    const attempt = await this.throttle.attempt(key, clientIp);
    let user: User | null;
    let ok: boolean;
    try {
      user = await this.dataSource.manager.findOneBy(User, { usernameKey: key });
      // Unknown users are checked against a decoy hash: same answer, about the same time.
      ok = await verifyPassword(user?.passwordHash ?? (await (this.decoy ??= decoyHash())), password);
    } catch (err) {
      await attempt.abandoned().catch(() => undefined);
      throw err;
    }
    if (!user || !ok) throw new AppError('unauthorized', BAD_CREDENTIALS);
    await attempt.succeeded();

    const sessionId = crypto.randomUUID();
    const { tokens, access, refresh } = this.issueTokens(user.id, sessionId, user.roles);
    const now = new Date();
    await inTransaction(this.dataSource, async (m) => {
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
      });
      await recordEvent(m, { type: 'session.created', userId: user.id, resourceId: sessionId, data: { session_id: sessionId, user_id: user.id } });
    });
    return tokens;
  }

  /** Rotation: the presented refresh token is spent; presenting a spent one revokes the session. */
  async refresh(refreshToken: string): Promise<TokenSet> {
    const claims = await this.verifier.verifyToken(refreshToken, 'refresh');
    const session = await this.dataSource.manager.findOneBy(Session, { id: claims.sessionId });
    if (!session || session.userId !== claims.userId || session.state !== SessionState.active) {
      throw new AppError('unauthorized', 'The refresh token is no longer valid.');
    }
    const user = await this.findUser(session.userId);
    if (!user) throw new AppError('unauthorized', 'The refresh token is no longer valid.');
    const { tokens, access, refresh } = this.issueTokens(user.id, session.id, user.roles);
    const rotated = await inTransaction(this.dataSource, async (m) => {
      const result = await m.update(
        Session,
        { id: session.id, refreshTokenId: claims.tokenId, storedState: 'active' },
        { refreshTokenId: refresh.tokenId, expiresAt: access.expiresAt, refreshExpiresAt: refresh.expiresAt, lastActivityAt: new Date() },
      );
      if (affectedRows(result) !== 1) return false;
      await recordEvent(m, { type: 'session.refreshed', userId: user.id, resourceId: session.id, data: { session_id: session.id } });
      return true;
    });
    if (!rotated) {
      // A refresh token that was already exchanged: someone else may hold it. End the session.
      await this.revoke(session.id, session.userId, 'refresh_token_reuse');
      throw new AppError('unauthorized', 'The refresh token was already used; the session is revoked.');
    }
    return tokens;
  }

  async logout(principal: Principal): Promise<Session> {
    await this.revoke(principal.sessionId, principal.userId, 'logout');
    return (await this.dataSource.manager.findOneBy(Session, { id: principal.sessionId }))!;
  }

  private async revoke(sessionId: string, userId: string, reason: string): Promise<void> {
    await inTransaction(this.dataSource, async (m: EntityManager) => {
      const result = await m.update(Session, { id: sessionId, storedState: 'active' }, { storedState: 'revoked', revokedAt: new Date() });
      if (affectedRows(result) === 1) {
        await recordEvent(m, { type: 'session.revoked', userId, resourceId: sessionId, data: { session_id: sessionId, reason } });
      }
    });
  }

  private issueTokens(userId: string, sessionId: string, roles: string[]) {
    const claims = { userId, sessionId, roles };
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
}
