// The verifier remembers access tokens it has verified (by their exact text) to spare the RSA
// check on every request; remembering must never stretch a token's life or accept another text.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { loadKeys, TokenSigner, TokenVerifier } from '../../lib/tokens';
// The module list installs the scope catalogue a token from before scopes is read with (lib/scopes.ts), as every entry point loads it.
import '../../subgraphs';

const keys = loadKeys({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'fav-keys-')) });
const signer = new TokenSigner(keys, 'test-issuer');
const claims = { userId: crypto.randomUUID(), sessionId: crypto.randomUUID(), roles: [], scopes: [] };
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

afterEach(() => jest.useRealTimers());

it('refuses a remembered token once it has expired', async () => {
  const verifier = new TokenVerifier(keys, 'test-issuer');
  const { token, expiresAt } = signer.sign(claims, 'access', 60);
  const first = await verifier.verifyRequest(bearer(token));
  expect(first.sessionId).toBe(claims.sessionId);
  expect((await verifier.verifyRequest(bearer(token))).tokenId).toBe(first.tokenId); // remembered

  jest.useFakeTimers({ now: expiresAt.getTime(), doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  await expect(verifier.verifyRequest(bearer(token))).rejects.toMatchObject({ code: 'unauthorized' });
  jest.setSystemTime(expiresAt.getTime() - 1000); // and it was not remembered as valid again
  await expect(verifier.verifyRequest(bearer(token))).resolves.toMatchObject({ tokenId: first.tokenId });
});

it('does not take a remembered token for one whose text differs, nor for another type', async () => {
  const verifier = new TokenVerifier(keys, 'test-issuer');
  const { token } = signer.sign(claims, 'access', 60);
  await verifier.verifyRequest(bearer(token));
  const [header, payload, signature] = token.split('.');
  const tampered = `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BA' : 'AA'}`;
  await expect(verifier.verifyRequest(bearer(tampered))).rejects.toMatchObject({ code: 'unauthorized' });
  const other = jwt.sign(
    { sid: claims.sessionId, typ: 'access', roles: ['admin'] },
    crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
    {
      algorithm: 'RS256',
      issuer: 'test-issuer',
      subject: claims.userId,
      jwtid: 'x',
      expiresIn: 60,
    },
  );
  await expect(verifier.verifyRequest(bearer(other))).rejects.toMatchObject({ code: 'unauthorized' });
  // An access token is not a refresh token, remembered or not.
  await expect(verifier.verifyRequest(bearer(token), 'refresh')).rejects.toMatchObject({ code: 'unauthorized' });
  await expect(verifier.verifyToken(token, 'refresh')).rejects.toMatchObject({ code: 'unauthorized' });
});

it('answers a remembered token from memory until the instant it expires', async () => {
  const verifier = new TokenVerifier(keys, 'test-issuer');
  const { token, expiresAt } = signer.sign(claims, 'access', 60);
  const first = await verifier.verifyRequest(bearer(token));
  // The same (frozen) principal: not verified again.
  expect(await verifier.verifyRequest(bearer(token))).toBe(first);
  jest.useFakeTimers({ now: expiresAt.getTime() - 1, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  expect(await verifier.verifyRequest(bearer(token))).toBe(first);
});

it('refuses with a message that says what is wrong', async () => {
  const verifier = new TokenVerifier(keys, 'test-issuer');
  await expect(verifier.verifyRequest(bearer('not.a.token'))).rejects.toMatchObject({
    code: 'unauthorized',
    message: 'The token is missing, invalid or expired.',
  });
});

it('remembers at most tokensKept tokens, forgetting the oldest first', async () => {
  const verifier = new TokenVerifier(keys, 'test-issuer', 2);
  const [a, b, c] = [1, 2, 3].map(() => signer.sign(claims, 'access', 60).token);
  const first = await verifier.verifyRequest(bearer(a));
  const second = await verifier.verifyRequest(bearer(b));
  const third = await verifier.verifyRequest(bearer(c));
  expect(await verifier.verifyRequest(bearer(b))).toBe(second);
  expect(await verifier.verifyRequest(bearer(c))).toBe(third);
  const again = await verifier.verifyRequest(bearer(a)); // forgotten: verified afresh
  expect(again).not.toBe(first);
  expect(again).toEqual(first);
});

describe('the principal a token names', () => {
  const sign = (payload: Record<string, unknown>, expiresIn = 60) =>
    jwt.sign({ sid: claims.sessionId, ...payload }, keys.privateKey!, {
      algorithm: 'RS256',
      issuer: 'test-issuer',
      subject: claims.userId,
      jwtid: crypto.randomUUID(),
      expiresIn,
    });

  it("a stream ticket's principal lasts as long as the access token that asked for it (sxp), not the ticket", async () => {
    const verifier = new TokenVerifier(keys, 'test-issuer');
    const sxp = Math.floor(Date.now() / 1000) + 3600;
    const principal = await verifier.verifyToken(sign({ typ: 'stream', sxp }, 30), 'stream');
    expect(principal.expiresAt.getTime()).toBe(sxp * 1000);
    // Without sxp a stream ticket is refused; an access token's principal ends with the token.
    await expect(verifier.verifyToken(sign({ typ: 'stream' }, 30), 'stream')).rejects.toMatchObject({
      code: 'unauthorized',
    });
    const access = sign({ typ: 'access' }, 60);
    expect((await verifier.verifyToken(access, 'access')).expiresAt.getTime()).toBe(
      (jwt.decode(access) as { exp: number }).exp * 1000,
    );
  });

  it('keeps only string roles, and none when the claim is missing or not a list', async () => {
    const verifier = new TokenVerifier(keys, 'test-issuer');
    expect(
      (await verifier.verifyToken(sign({ typ: 'access', roles: ['admin', 5, null, 'x'] }), 'access')).roles,
    ).toEqual(['admin', 'x']);
    expect((await verifier.verifyToken(sign({ typ: 'access' }), 'access')).roles).toEqual([]);
    expect((await verifier.verifyToken(sign({ typ: 'access', roles: 'admin' }), 'access')).roles).toEqual([]);
  });

  it("reads a token's scopes as issued, and a token from before scopes by its roles", async () => {
    const verifier = new TokenVerifier(keys, 'test-issuer');
    const scoped = await verifier.verifyToken(
      sign({ typ: 'access', roles: ['admin'], scopes: ['tts:read', 7] }),
      'access',
    );
    expect(scoped.scopes).toEqual(['tts:read']);
    const oldAdmin = await verifier.verifyToken(sign({ typ: 'access', roles: ['admin'] }), 'access');
    expect(oldAdmin.scopes).toContain('admin:roles');
    const oldUser = await verifier.verifyToken(sign({ typ: 'access', roles: [] }), 'access');
    expect(oldUser.scopes).toContain('tts:synthesize');
    expect(oldUser.scopes).not.toContain('admin:users');
  });
});
