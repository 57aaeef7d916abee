// Forged and doctored tokens for the negative tests.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import jwt from 'jsonwebtoken';

export const decode = (token: string) => jwt.decode(token) as Record<string, any>;

/** The server's own private key (zero-config mode keeps it under DATA_DIR/keys). */
export function serverPrivateKey(dataDir: string): string {
  return fs.readFileSync(path.join(dataDir, 'keys', 'jwt-private.pem'), 'utf8');
}

export function signWith(key: string, claims: Record<string, unknown>, options: jwt.SignOptions = {}): string {
  return jwt.sign(claims, key, { algorithm: 'RS256', ...options });
}

export function otherKey(): string {
  return crypto
    .generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
}

/** `alg: none`: the claims of a real token, no signature. */
export function unsigned(token: string): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(decode(token))}.`;
}
