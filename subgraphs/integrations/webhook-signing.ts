// Standard Webhooks (https://www.standardwebhooks.com): `whsec_` secrets (base64 after the
// prefix: the HMAC key's bytes), and `webhook-signature: v1,<base64 HMAC-SHA256 of
// "<webhook-id>.<webhook-timestamp>.<body>">`, several separated by spaces while a rotated
// secret still signs alongside the new one. Verified in the tests by the `standardwebhooks`
// package, not by this code.
import crypto from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: 32 random bytes. */
export function newSecret(): string {
  return PREFIX + crypto.randomBytes(32).toString('base64');
}

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers of one attempt; every secret given signs it. */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  body: string,
  now = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signature(s, id, timestamp, body)).join(' '),
  };
}

/** `*` matches the rest of the type, dots included; anything else matches exactly. */
export function typeMatches(pattern: string, type: string): boolean {
  const star = pattern.indexOf('*');
  return star < 0 ? pattern === type : type.startsWith(pattern.slice(0, star));
}

/** A pattern a webhook may name: a type's characters, with at most one `*`, at its end. */
export const EVENT_TYPE_PATTERN = /^(?:[a-z0-9_]+(?:\.[a-z0-9_]+)*(?:\.\*)?|\*)$/;
