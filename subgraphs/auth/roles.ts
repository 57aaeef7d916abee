// Roles (issue 30): the built-in `admin` and `user`, custom roles, and which roles a user holds.
// A user's scopes are the union of their roles'. Every change that alters someone's scopes writes
// `user.scopes_changed` with their new full set, in the same transaction: each process applies
// it to that user's next request (lib/revocations.ts), without a new login.
import { staleVersion } from '../../lib/kit/versioned';
import { EVERYONE, UserCaps } from '../../lib/kit/user-caps';
import type { DataSource, EntityManager } from 'typeorm';
import type { Config } from '../../lib/config';
import { affectedRows, isUniqueViolation } from '../../lib/database/portable';
import { AppError, validationError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { USER_SCOPES_CHANGED } from '../../lib/revocations';
import { allScopes, builtInRoles, isScope } from '../../lib/scopes';
import { Audit, auditedTransaction } from './audit';
import { Role } from './entities/role';
import { User } from './entities/user';

export const ROLE_NAME = /^[a-z0-9_-]{1,32}$/;
const BUILT_IN_SINCE = new Date(0);

/** The caller of an administrative change: who, and the scopes they hold now. */
export interface Actor {
  userId: string | null;
  username?: string;
  /** Undefined: the command line, which may grant anything. */
  scopes?: ReadonlySet<string>;
}

export interface RoleChanges {
  description?: string | null;
  scopes?: string[];
}

function builtInRole(name: string): Role {
  return Object.assign(new Role(), {
    name,
    description: name === 'admin' ? 'Every scope.' : 'Every scope but admin:*.',
    scopeList: builtInRoles().get(name)!.join(','),
    builtIn: true,
    version: 1,
    createdAt: BUILT_IN_SINCE,
    updatedAt: BUILT_IN_SINCE,
  });
}

/** Scope names in the contract's order, duplicates dropped; unknown ones are a validation_error. */
function checkedScopes(scopes: string[]): string[] {
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) {
    throw validationError({ scopes: [`unknown scope(s): ${unknown.join(', ')}; known: ${allScopes().join(', ')}`] });
  }
  const wanted = new Set(scopes);
  return allScopes().filter((s) => wanted.has(s));
}

/** A user grants only scopes they hold (the command line excepted). */
function mayGrant(actor: Actor, scopes: Iterable<string>): void {
  if (!actor.scopes) return;
  const missing = [...scopes].filter((s) => !actor.scopes!.has(s));
  if (missing.length) {
    throw new AppError('forbidden', `You cannot grant scopes you do not hold: ${missing.join(', ')}.`, {
      scopes: missing,
    });
  }
}

const holds = (user: Pick<User, 'roles'>, role: string) => user.roles.includes(role);

export class RoleAdministration {
  constructor(
    private readonly config: Pick<Config, 'ROLES_MAX'>,
    private readonly dataSource: DataSource,
    private readonly logger: Logger,
  ) {
    this.caps = new UserCaps(dataSource);
  }

  private readonly caps: UserCaps;

  /** Every role: the built-in ones first, then the custom ones by name. */
  async list(): Promise<Role[]> {
    const custom = await this.dataSource.manager.find(Role, { order: { name: 'ASC' } });
    return [...Array.from(builtInRoles().keys(), builtInRole), ...custom];
  }

  async get(name: string, m: EntityManager = this.dataSource.manager): Promise<Role> {
    if (builtInRoles().has(name)) return builtInRole(name);
    const role = ROLE_NAME.test(name) ? await m.findOneBy(Role, { name }) : null;
    if (!role) throw new AppError('not_found', 'No such role.');
    return role;
  }

  /** The union of the roles' scopes, in the contract's order; a role that does not exist gives none. */
  async scopesOfRoles(roles: readonly string[], m: EntityManager = this.dataSource.manager): Promise<string[]> {
    const held = new Set<string>();
    const custom: string[] = [];
    for (const name of roles) {
      const builtIn = builtInRoles().get(name);
      if (builtIn) builtIn.forEach((s) => held.add(s));
      else custom.push(name);
    }
    if (custom.length) {
      const rows = await m
        .createQueryBuilder(Role, 'r')
        .select(['r.name', 'r.scopeList'])
        .where('r.name IN (:...names)', { names: custom })
        .getMany();
      for (const row of rows) row.scopes.forEach((s) => held.add(s));
    }
    return allScopes().filter((s) => held.has(s));
  }

  async create(actor: Actor, name: string, description: string | null | undefined, scopes: string[]): Promise<Role> {
    if (!ROLE_NAME.test(name)) throw validationError({ name: ['must match [a-z0-9_-]{1,32}'] });
    if (builtInRoles().has(name))
      throw new AppError('conflict', `"${name}" is a built-in role.`, { name: ['is taken'] });
    const list = checkedScopes(scopes);
    mayGrant(actor, list);
    const now = new Date();
    try {
      const cap = {
        limit: 'ROLES_MAX',
        max: this.config.ROLES_MAX,
        what: `At most ${this.config.ROLES_MAX} custom roles.`,
      };
      await this.caps.prepare(EVERYONE, [cap.limit]);
      return await auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
        // Counted for everyone: one counter row, taken by the guarded update (lib/kit/user-caps.ts).
        await this.caps.take(m, EVERYONE, { cap });
        const role = m.create(Role, {
          name,
          description: description ?? null,
          scopeList: list.join(','),
          version: 1,
          createdAt: now,
          updatedAt: now,
        });
        await m.insert(Role, role);
        await this.auditRole(audit, actor, 'role.created', role);
        return role;
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new AppError('conflict', 'A role of this name exists already.', { name: ['is taken'] });
      throw err;
    }
  }

  /** Changes a custom role at `version`; a change of its scopes gives each holder their new set. */
  async update(actor: Actor, name: string, version: number, changes: RoleChanges): Promise<Role> {
    if (builtInRoles().has(name)) throw new AppError('forbidden', `The built-in role "${name}" is read-only.`);
    const list = changes.scopes === undefined ? undefined : checkedScopes(changes.scopes);
    if (list) mayGrant(actor, list);
    return this.inRolesLock(async (m, audit) => {
      const role = await this.atVersion(m, name, version);
      // Taking scopes away is granting too: only someone who holds them may change what they give.
      mayGrant(actor, role.scopes);
      const set: Partial<Role> = { version: version + 1, updatedAt: new Date() };
      if (changes.description !== undefined) set.description = changes.description;
      if (list) set.scopeList = list.join(',');
      const result = await m.update(Role, { name, version }, set);
      if (affectedRows(result) !== 1) throw staleVersion('role', (await this.get(name, m)).version, version);
      const updated = await this.get(name, m);
      await this.auditRole(audit, actor, 'role.updated', updated, {
        changed: Object.keys(changes).filter((k) => changes[k as keyof RoleChanges] !== undefined),
      });
      if (list && list.join(',') !== role.scopeList) {
        for (const holder of await this.holders(m, name)) await this.scopesChanged(m, audit, holder);
      }
      return updated;
    });
  }

  /** Deletes a custom role at `version`; refused (409, `details.users`) while anyone holds it. */
  async delete(actor: Actor, name: string, version: number): Promise<Role> {
    if (builtInRoles().has(name)) throw new AppError('forbidden', `The built-in role "${name}" is read-only.`);
    return this.inRolesLock(async (m, audit) => {
      const role = await this.atVersion(m, name, version);
      mayGrant(actor, role.scopes);
      const users = await this.holders(m, name);
      if (users.length) {
        throw new AppError('conflict', `${users.length} user(s) hold the role; take it from them first.`, {
          users: users.slice(0, 100).map((u) => u.id),
        });
      }
      const result = await m.delete(Role, { name, version });
      if (affectedRows(result) !== 1) throw staleVersion('role', (await this.get(name, m)).version, version);
      await this.caps.release(m, EVERYONE, 'ROLES_MAX');
      await this.auditRole(audit, actor, 'role.deleted', role);
      return role;
    });
  }

  /** Roles a new user may be given by `actor`: they exist, and the actor holds every scope they give. */
  async checkAssignable(actor: Actor, roles: string[]): Promise<void> {
    const bad = roles.filter((r) => !ROLE_NAME.test(r));
    if (bad.length) throw validationError({ roles: [`not role names: ${bad.join(', ')}`] });
    for (const name of roles) {
      if (!builtInRoles().has(name) && !(await this.dataSource.manager.existsBy(Role, { name })))
        throw validationError({ roles: [`no role named "${name}"`] });
    }
    mayGrant(actor, await this.scopesOfRoles(roles));
  }

  /**
   * Sets the roles a user holds, at the user's `version`. The actor grants only scopes they hold
   * (so no one raises their own), and no one takes `admin` from the last enabled administrator.
   */
  async setUserRoles(actor: Actor, userId: string, version: number, roles: string[]): Promise<User> {
    const wanted = [...new Set(roles)];
    const bad = wanted.filter((r) => !ROLE_NAME.test(r));
    if (bad.length) throw validationError({ roles: [`not role names: ${bad.join(', ')}`] });
    return this.inRolesLock(async (m, audit) => {
      const user = await m.findOneBy(User, { id: userId });
      if (!user) throw new AppError('not_found', 'No such user.');
      if (user.version !== version) throw staleVersion('user', user.version, version);
      for (const name of wanted) {
        if (!builtInRoles().has(name) && !(await m.existsBy(Role, { name })))
          throw validationError({ roles: [`no role named "${name}"`] });
      }
      const before = await this.scopesOfRoles(user.roles, m);
      const after = await this.scopesOfRoles(wanted, m);
      // What is given and what is taken away alike: both are grants of the actor's.
      mayGrant(
        actor,
        after.filter((s) => !before.includes(s)),
      );
      mayGrant(
        actor,
        before.filter((s) => !after.includes(s)),
      );
      if (holds(user, 'admin') && !wanted.includes('admin')) await keepAnAdmin(m, user);
      const result = await m.update(
        User,
        { id: userId, version },
        { roleList: wanted.join(','), version: version + 1 },
      );
      if (affectedRows(result) !== 1) throw new AppError('conflict', 'The user changed meanwhile; read it again.');
      await audit({
        type: 'user.roles_changed',
        userId,
        resourceId: userId,
        username: user.username,
        data: { user_id: userId, roles: wanted, previous_roles: user.roles, by: actor.userId ?? 'cli' },
      });
      if (after.join(',') !== before.join(',')) {
        await this.scopesChanged(m, audit, { id: userId, username: user.username }, after);
      }
      return (await m.findOneBy(User, { id: userId }))!;
    });
  }

  /** The user's new full set, as an event every process applies to their next request. */
  private async scopesChanged(
    m: EntityManager,
    audit: Audit,
    user: { id: string; username: string; roleList?: string },
    scopes?: string[],
  ): Promise<void> {
    const set = scopes ?? (await this.scopesOfRoles(user.roleList ? user.roleList.split(',') : [], m));
    await audit({
      type: USER_SCOPES_CHANGED,
      userId: user.id,
      resourceId: user.id,
      username: user.username,
      data: { user_id: user.id, scopes: set },
    });
  }

  /** Users holding the role (a LIKE narrows, the exact list decides). */
  private async holders(m: EntityManager, name: string): Promise<User[]> {
    const candidates = await m
      .createQueryBuilder(User, 'u')
      .select(['u.id', 'u.username', 'u.roleList'])
      .where("u.roleList LIKE :pattern ESCAPE '!'", { pattern: `%${name.replace(/[!%_]/g, '!$&')}%` })
      .getMany();
    return candidates.filter((u) => holds(u, name));
  }

  private async atVersion(m: EntityManager, name: string, version: number): Promise<Role> {
    const role = await this.get(name, m);
    if (role.version !== version) throw staleVersion('role', role.version, version);
    return role;
  }

  private auditRole(audit: Audit, actor: Actor, type: string, role: Role, extra: Record<string, unknown> = {}) {
    return audit({
      type,
      userId: actor.userId ?? '',
      resourceId: role.name,
      username: actor.username ?? 'cli',
      data: { role: role.name, scopes: role.scopes, by: actor.userId ?? 'cli', ...extra },
    });
  }

  /**
   * Role changes run one at a time behind the `admins` lock row (user-admin.ts): two admins
   * taking `admin` from each other cannot both pass the last-admin check, and a role is never
   * deleted while a concurrent assignment gives it.
   */
  private inRolesLock<T>(work: (m: EntityManager, audit: Audit) => Promise<T>): Promise<T> {
    return auditedTransaction(this.dataSource, this.logger, async (m, audit) => {
      await m.query("UPDATE auth_locks SET name = name WHERE name = 'admins'");
      return work(m, audit);
    });
  }
}

/** Refuses to take `admin` from the last enabled administrator. Call under the admin lock. */
export async function keepAnAdmin(m: EntityManager, user: User): Promise<void> {
  if (!holds(user, 'admin') || user.disabled) return;
  const others = await m
    .createQueryBuilder(User, 'u')
    .select(['u.id', 'u.roleList'])
    .where('u.disabled = :no AND u.id <> :id', { no: false, id: user.id })
    .andWhere("u.roleList LIKE '%admin%'")
    .getMany();
  if (!others.some((u) => holds(u, 'admin'))) {
    throw new AppError('conflict', 'Cannot take admin from the last administrator; make another one first.', {
      reason: 'last_admin',
    });
  }
}
