// The speech answers open per user in this facade process (SPEECH_ANSWERS_PER_USER), counted
// from the queued synthesis until the answer ends.
import crypto from 'node:crypto';
import type { Response } from 'express';
import { apiKeyOf } from '../../../lib/api-keys';

/**
 * The `sub` of a token the gateway has just accepted (it checked the signature); for an API key
 * (lib/api-keys.ts), which holds no subject, the key's hash: its answers are counted per key.
 */
export function tokenSubject(authorization: string | undefined): string | undefined {
  const key = apiKeyOf(authorization);
  if (key) return `key:${crypto.createHash('sha256').update(key).digest('base64url')}`;
  try {
    const payload = Buffer.from(String(authorization).split('.')[1] ?? '', 'base64url').toString('utf8');
    const { sub } = JSON.parse(payload) as { sub?: unknown };
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}

export class OpenAnswers {
  private readonly open = new Map<string, number>();

  /** The answers `user` has open. */
  count(user: string): number {
    return this.open.get(user) ?? 0;
  }

  /** Counts one more answer of `user` until `res` closes. */
  hold(user: string, res: Response): void {
    this.open.set(user, this.count(user) + 1);
    res.once('close', () => {
      const left = (this.open.get(user) ?? 1) - 1;
      if (left > 0) this.open.set(user, left);
      else this.open.delete(user);
    });
  }
}
