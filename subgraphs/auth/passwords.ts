// argon2id with the OWASP minimum (19 MiB, t=2, p=1). node-argon2 hashes on libuv's
// thread pool, so logins never block the event loop that serves other requests.
import argon2 from 'argon2';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

/** A hash of nothing in particular: unknown users are checked against it, so that they take as long as known ones. */
export function decoyHash(): Promise<string> {
  return hashPassword(`decoy-${Math.random()}`);
}
