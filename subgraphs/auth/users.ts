// Creating a user: shared by the createUser mutation, the bootstrap admin and `npm run users`.
import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import { inTransaction, isUniqueViolation } from '../../lib/database';
import { AppError, validationError } from '../../lib/errors';
import { recordEvent } from '../../lib/outbox';
import { User } from './entities/user';
import { hashPassword } from './passwords';

/** The unique login key: usernames are case-insensitive on every database collation. */
export const usernameKey = (username: string) => username.trim().toLowerCase();

export async function createUser(dataSource: DataSource, username: string, password: string, roles: string[]): Promise<User> {
  const name = username.trim();
  const problems: Record<string, string[]> = {};
  if (name.length < 1 || name.length > 64) problems.username = ['username must be 1 to 64 characters after trimming'];
  if (password.length < 8 || password.length > 1024) problems.password = ['password must be 8 to 1024 characters'];
  if (Object.keys(problems).length) throw validationError(problems);
  const user = dataSource.manager.create(User, {
    id: crypto.randomUUID(),
    username: name,
    usernameKey: usernameKey(name),
    passwordHash: await hashPassword(password),
    roleList: [...new Set(roles)].join(','),
    createdAt: new Date(),
  });
  try {
    return await inTransaction(dataSource, async (m) => {
      await m.insert(User, user);
      await recordEvent(m, { type: 'user.created', userId: user.id, resourceId: user.id, data: { username: user.username, roles: user.roles } });
      return user;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', 'A user with this username exists already.');
    throw err;
  }
}
