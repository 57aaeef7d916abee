// argon2id at t=2, p=1 with PASSWORD_HASH_MEMORY_KIB of memory (OWASP's minimum, 19 MiB, unless a
// test run asks for less: lib/config.ts). A hash carries its parameters, so verifying needs none.
// node-argon2 hashes on libuv's thread pool, so logins never block the event loop that serves
// other requests.
import argon2 from 'argon2';
import type { Config } from '../../lib/config';

export type HashCost = Pick<Config, 'PASSWORD_HASH_MEMORY_KIB'>;

export function hashPassword(password: string, cost: HashCost): Promise<string> {
  return argon2.hash(password, {
    type: argon2.argon2id,
    memoryCost: cost.PASSWORD_HASH_MEMORY_KIB,
    timeCost: 2,
    parallelism: 1,
  });
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

/** A hash of nothing in particular: unknown users are checked against it, so that they take as long as known ones. */
export function decoyHash(cost: HashCost): Promise<string> {
  return hashPassword(`decoy-${Math.random()}`, cost);
}
