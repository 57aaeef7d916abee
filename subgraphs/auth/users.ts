// Creating a user: shared by the admin routes, the bootstrap admin and `npm run users`.
import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import { isUniqueViolation } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import { publish } from '../../lib/kit/typed-events';
import { UserCreated } from './events';
import { User } from './entities/user';
import { HashCost, hashPassword } from './passwords';
import { passwordProblems } from './password-policy';

/** The unique login key: usernames are case-insensitive on every database collation. */
export const usernameKey = (username: string) => username.trim().toLowerCase();

export const isAdmin = (user: Pick<User, 'roles'>) => user.roles.includes('admin');

export interface NewUser {
  username: string;
  password: string;
  roles: string[];
  /** zxcvbn score the password must reach (PASSWORD_MIN_SCORE). */
  minScore: number;
  /** argon2id's memory cost of the hash (PASSWORD_HASH_MEMORY_KIB). */
  hashCost: HashCost;
  /** Who created it: an admin's user id, or `cli`/`bootstrap`. */
  createdBy?: string;
}

export async function createUser(dataSource: DataSource, input: NewUser): Promise<User> {
  const name = input.username.trim();
  const problems: Record<string, string[]> = {};
  if (name.length < 1 || name.length > 64) problems.username = ['username must be 1 to 64 characters after trimming'];
  const weak = passwordProblems(input.password, input.minScore, [name]);
  if (weak.length) problems.password = weak;
  if (Object.keys(problems).length) throw validationError(problems);
  const now = new Date();
  const user = dataSource.manager.create(User, {
    id: crypto.randomUUID(),
    username: name,
    usernameKey: usernameKey(name),
    passwordHash: await hashPassword(input.password, input.hashCost),
    roleList: [...new Set(input.roles)].join(','),
    createdAt: now,
    disabled: false,
    lastLoginAt: null,
    version: 1,
  });
  try {
    return await inTransaction(dataSource, async (m) => {
      await m.insert(User, user);
      await publish(m, UserCreated, {
        userId: user.id,
        resourceId: user.id,
        data: {
          user_id: user.id,
          username: user.username,
          roles: user.roles,
          ...(input.createdBy ? { by: input.createdBy } : {}),
        },
      });
      return user;
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw new AppError('conflict', 'A user with this username exists already.', { username: ['is taken'] });
    throw err;
  }
}
