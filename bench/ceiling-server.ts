// The framework-free ceiling of GET /api/v1/auth/session: node:http, one RS256 signature check
// (jsonwebtoken, key parsed once) and one primary-key read with mysql2, nothing else: no
// framework, no ORM, no GraphQL, no access log. It reads the project server's own auth database
// and key, so both answer the same token with the same row. Prints "READY <url>".
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import mysql from 'mysql2/promise';
import { loadConfig } from '../lib/config';
import { loadKeys } from '../lib/tokens';
import { mysqlDatabaseName, mysqlServer } from '../lib/database/mysql-url';

const config = loadConfig();
const publicKey = crypto.createPublicKey(loadKeys(config).publicKey);
const { host, port, user, password } = mysqlServer(config);
const pool = mysql.createPool({
  host,
  port,
  user,
  password,
  database: mysqlDatabaseName(config, 'auth'),
  connectionLimit: config.DATABASE_POOL_SIZE,
  timezone: 'Z',
});
const SQL =
  'SELECT id, user_id, state, created_at, expires_at, last_activity_at, refresh_expires_at FROM sessions WHERE id = ?';

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
const unauthorized = (res: http.ServerResponse) =>
  send(res, 401, { error: 'unauthorized', message: 'The token is missing, invalid or expired.' });

const server = http.createServer((req, res) => void answer(req, res));

async function answer(req: http.IncomingMessage, res: http.ServerResponse) {
  if (req.method !== 'GET' || req.url !== '/api/v1/auth/session') return send(res, 404, { error: 'not_found' });
  const header = req.headers.authorization;
  if (!header?.startsWith('Bearer ')) return unauthorized(res);
  let claims: jwt.JwtPayload;
  try {
    claims = jwt.verify(header.slice(7), publicKey, {
      algorithms: ['RS256'],
      issuer: config.JWT_ISSUER,
    }) as jwt.JwtPayload;
  } catch {
    return unauthorized(res);
  }
  if (claims.typ !== 'access' || typeof claims.sid !== 'string') return unauthorized(res);
  try {
    const [rows] = await pool.execute<mysql.RowDataPacket[]>(SQL, [claims.sid]);
    const s = rows[0];
    if (!s || s.user_id !== claims.sub || s.state !== 'active' || s.refresh_expires_at.getTime() <= Date.now())
      return unauthorized(res);
    send(res, 200, {
      session_id: s.id,
      user_id: s.user_id,
      expires_at: s.expires_at,
      created_at: s.created_at,
      last_activity_at: s.last_activity_at,
      state: 'active',
    });
  } catch {
    send(res, 503, { error: 'service_unavailable' });
  }
}
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}\n`),
);
process.on('SIGTERM', () => server.close(() => void pool.end().finally(() => process.exit(0))));
