// Administering users: list, read, create, disable, enable, unlock, set a password, delete.
// Used by the admin GraphQL operations and by `npm run users`; `actor` is the administrator's
// user id, or null for the command line (which has no account of its own).
import { staleVersion } from '../../lib/kit/versioned';
import { UserCap } from '../../lib/kit/user-caps';
import { IsNull, type DataSource, type EntityManager } from 'typeorm';
import { Config } from '../../lib/config';
import { affectedRows } from '../../lib/database/portable';
import { AppError, validationError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import { Audit, auditedTransaction } from './audit';
import { ApiKey } from './entities/api-key';
import { Session } from './entities/session';
import { User } from './entities/user';
import type { LoginThrottle } from './login-throttle';
import { hashPassword } from './passwords';
import { passwordProblems } from './password-policy';
import { revokeUserSessions } from './sessions';
import { createUser, isAdmin, usernameKey } from './users';

/** Users in username order (the lower-cased name, unique). */
const USER_ORDER: PageOrder<User> = { keys: [{ property: 'usernameKey', kind: 'text' }], direction: 'ASC' };

/** A LIKE pattern matching names that start with `prefix` ('!' escapes, on both databases). */
const likePrefix = (prefix: string) => `${prefix.replace(/[!%_]/g, '!$&')}%`;

const by = (actor: string | null) => actor ?? 'cli';

export class UserAdministration {
  constructor(
    private readonly config: Pick<Config, 'PASSWORD_MIN_SCORE' | 'PASSWORD_HASH_MEMORY_KIB'>,
    private readonly dataSource: DataSource,
    private readonly throttle: LoginThrottle,
    private readonly logger: Logger,
  ) {}

  list(limit: number, query?: string | null, cursor?: string | null): Promise<Page<User>> {
    const qb = this.dataSource.manager.createQueryBuilder(User, 'u');
    const prefix = query ? usernameKey(query) : '';
    if (prefix) qb.andWhere("u.usernameKey LIKE :prefix ESCAPE '!'", { prefix: likePrefix(prefix) });
    return pageOf(qb, USER_ORDER, limit, cursor);
  }

  async get(id: string): Promise<User> {
    const user = await this.dataSource.manager.findOneBy(User, { id });
    if (!user) throw new AppError('not_found', 'No such user.');
    return user;
  }

  async byName(username: string): Promise<User> {
    const user = await this.dataSource.manager.findOneBy(User, { usernameKey: usernameKey(username) });
    if (!user) throw new AppError('not_found', `No user named "${username.trim()}".`);
    return user;
  }

  create(actor: string | null, username: string, password: string, roles: string[]): Promise<User> {
    return createUser(this.dataSource, {
      username,
      password,
      roles,
      minScore: this.config.PASSWORD_MIN_SCORE,
      hashCost: this.config,
      createdBy: by(actor),
    });
  }

  /** Disables the user and revokes every session of theirs in the same transaction. */
  async disable(actor: string | null, id: string): Promise<User> {
    if (actor === id) throw new AppError('forbidden', 'You cannot disable your own account.');
    await this.inAdminLock(async (m, audit) => {
      const user = await this.current(m, id);
      if (user.disabled) return; // already: nothing changes, no event
      await this.keepAnAdmin(m, user, 'disable');
      const result = await m.update(User, { id, disabled: false }, { disabled: true, version: user.version + 1 });
      if (affectedRows(result) !== 1) return;
      await audit({
        type: 'user.disabled',
        userId: id,
        resourceId: id,
        username: user.username,
        data: { user_id: id, by: by(actor) },
      });
      await revokeUserSessions(m, audit, user, 'user_disabled');
    });
    return this.get(id);
  }

  async enable(actor: string | null, id: string): Promise<User> {
    await auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      const user = await this.current(m, id);
      if (!user.disabled) return;
      const result = await m.update(User, { id, disabled: true }, { disabled: false, version: user.version + 1 });
      if (affectedRows(result) !== 1) return;
      await audit({
        type: 'user.enabled',
        userId: id,
        resourceId: id,
        username: user.username,
        data: { user_id: id, by: by(actor) },
      });
    });
    return this.get(id);
  }

  /** Clears the user's login-failure counts, from every client address. */
  async unlock(actor: string | null, id: string): Promise<User> {
    const user = await this.get(id);
    await this.throttle.unlock(user.usernameKey);
    await auditedTransaction(this.dataSource, this.logger, (_m, audit) =>
      audit({
        type: 'user.unlocked',
        userId: id,
        resourceId: id,
        username: user.username,
        data: { user_id: id, by: by(actor) },
      }),
    );
    return user;
  }

  /** An operator's new password for a user (the command line): checked by the policy; every session of theirs ends. */
  async setPassword(actor: string | null, id: string, password: string): Promise<User> {
    const user = await this.get(id);
    const problems = passwordProblems(password, this.config.PASSWORD_MIN_SCORE, [user.username]);
    if (problems.length) throw validationError({ password: problems });
    const passwordHash = await hashPassword(password, this.config);
    await auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      const result = await m
        .createQueryBuilder()
        .update(User)
        .set({ passwordHash, version: () => 'version + 1' })
        .where('id = :id', { id })
        .execute();
      if (affectedRows(result) !== 1) throw new AppError('not_found', 'No such user.');
      await audit({
        type: 'password.changed',
        userId: id,
        resourceId: id,
        username: user.username,
        data: { user_id: id, by: by(actor) },
      });
      await revokeUserSessions(m, audit, user, 'password_changed');
    });
    return this.get(id);
  }

  /**
   * Deletes the user at the version the caller names (optimistic locking, as for voices). Their
   * sessions are revoked first (events: other subgraphs refuse the tokens at once); the
   * `user.deleted` event makes the other subgraphs delete what the user owned.
   */
  async delete(actor: string | null, id: string, version: number): Promise<User> {
    if (actor === id) throw new AppError('forbidden', 'You cannot delete your own account.');
    return this.inAdminLock(async (m, audit) => {
      const user = await this.current(m, id);
      if (user.version !== version) throw staleVersion('user', user.version, version);
      await this.keepAnAdmin(m, user, 'delete');
      await revokeUserSessions(m, audit, user, 'user_deleted');
      await audit({
        type: 'user.deleted',
        userId: id,
        resourceId: id,
        username: user.username,
        data: { user_id: id, by: by(actor) },
      });
      await m.delete(Session, { userId: id });
      // Their API keys go too; each key's tokens are refused as its owner's sessions are.
      const keys = await m.find(ApiKey, { select: { id: true }, where: { userId: id, revokedAt: IsNull() } });
      for (const key of keys)
        await audit({
          type: 'session.revoked',
          userId: id,
          resourceId: key.id,
          username: user.username,
          data: { session_id: key.id, reason: 'user_deleted' },
        });
      await m.delete(ApiKey, { userId: id });
      await m.delete(UserCap, { ownerId: id });
      const result = await m.delete(User, { id, version });
      if (affectedRows(result) !== 1) throw new AppError('conflict', 'The user changed meanwhile; read it again.');
      return user;
    });
  }

  /** The row as committed now (read after the transaction's first write took its locks). */
  private async current(m: EntityManager, id: string): Promise<User> {
    const user = await m.findOneBy(User, { id });
    if (!user) throw new AppError('not_found', 'No such user.');
    return user;
  }

  /**
   * A transaction that first takes the one `admins` lock row: operations that can take away an
   * administrator run one at a time, so two admins disabling each other cannot both pass the
   * last-admin check. On SQLite the write takes the database's write lock, to the same effect.
   */
  private inAdminLock<T>(work: (m: EntityManager, audit: Audit) => Promise<T>): Promise<T> {
    return auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      await m.query("UPDATE auth_locks SET name = name WHERE name = 'admins'");
      return work(m, audit);
    });
  }

  /** Refuses to disable or delete the last enabled administrator. Call under the admin lock. */
  private async keepAnAdmin(m: EntityManager, user: User, what: 'disable' | 'delete'): Promise<void> {
    if (!isAdmin(user) || user.disabled) return;
    const others = await m
      .createQueryBuilder(User, 'u')
      .select(['u.id', 'u.roleList'])
      .where('u.disabled = :no AND u.id <> :id', { no: false, id: user.id })
      .andWhere("u.roleList LIKE '%admin%'")
      .getMany();
    if (!others.some(isAdmin)) {
      throw new AppError('conflict', `Cannot ${what} the last administrator; make another one first.`, {
        reason: 'last_admin',
      });
    }
  }
}
