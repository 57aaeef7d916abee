// Idempotency-Key (CONTRACT.md "Limits", the IETF httpapi draft), for every mutation at the edge:
// the gateway's direct path (the facade's POSTs) and /graphql. One pipeline step claims the key
// before the operation runs and records its answer after; the REST status, body and Location are
// derived from that answer by the facade, so replaying the answer replays them.
//
// Kept in the shared `events` database (the table `idempotency_keys`, beside the spent stream
// tickets): every gateway process opens it, so a retry that lands on another process behind a
// load balancer finds the first claim. Answers may hold secrets (a webhook's secret, an API key,
// tokens); they are stored encrypted under a key derived from the Idempotency-Key itself, which
// the database never holds (only a hash of it), so only a caller presenting the key can read one.
import crypto from 'node:crypto';
import {
  Column,
  DataSource,
  Entity,
  IsNull,
  LessThan,
  MigrationInterface,
  PrimaryColumn,
  QueryRunner,
  Table,
} from 'typeorm';
import type { Config } from './config';
import { columns, isUniqueViolation } from './database/portable';
import { AppError, ErrorCode } from './errors';
import type { Logger } from './logger';

export { IDEMPOTENCY_KEY_HEADER } from './request-context';
/** What a key may be: printable ASCII, 1–255 characters (a UUID is what clients should send). */
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
/** Seconds a retry that found the first request running is told to wait. */
export const RUNNING_RETRY_AFTER_SECONDS = 1;

@Entity('idempotency_keys')
export class IdempotencyRecord {
  /** SHA-256 of the user and the key: the key itself is never stored. */
  @PrimaryColumn({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash!: string;

  /** SHA-256 of the operation and its variables: another body with the same key is refused. */
  @Column({ type: 'varchar', length: 64 })
  fingerprint!: string;

  /** The answer, encrypted (AES-256-GCM, base64 of iv | tag | ciphertext); null while it runs. */
  @Column({ type: 'text', nullable: true })
  answer!: string | null;

  /** While the first request runs; a claim whose process died is taken over after it. */
  @Column({ name: 'locked_until', type: 'datetime', nullable: true })
  lockedUntil!: Date | null;

  @Column({ name: 'expires_at', type: 'datetime' })
  expiresAt!: Date;
}

export class CreateIdempotencyKeys1764000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'idempotency_keys',
        columns: [
          c.string('key_hash', 64, { isPrimary: true }),
          c.string('fingerprint', 64),
          c.text('answer', { isNullable: true }),
          c.timestamp('locked_until', { isNullable: true }),
          c.timestamp('expires_at'),
        ],
        indices: [{ columnNames: ['expires_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('idempotency_keys');
  }
}

/** An answer as the pipeline hands it on (already normalised). */
export type StoredAnswer = { data?: Record<string, unknown> | null; errors?: readonly unknown[] };

/** What a claim found: go on (and record), the first answer again, or a refusal. */
export type Claim =
  | { kind: 'run'; keyHash: string; secret: Buffer }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'refused'; error: AppError };

/** Answers that are not kept: the operation had no effect and a retry should run it again. */
const TRANSIENT: ReadonlySet<string> = new Set<ErrorCode>([
  'rate_limit_exceeded',
  'service_unavailable',
  'internal_error',
  'unauthorized',
]);

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** JSON with object keys sorted, so that the same variables in another order are the same body. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Whether an Idempotency-Key header value is acceptable; a bad one is a 400. */
export function checkIdempotencyKey(key: string): void {
  if (!KEY_FORMAT.test(key))
    throw new AppError('validation_error', 'The Idempotency-Key is invalid.', {
      idempotency_key: ['must be 1–255 printable ASCII characters (a UUID is best)'],
    });
}

export class IdempotencyStore {
  private lastPrune = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: Pick<Config, 'IDEMPOTENCY_TTL_SECONDS' | 'IDEMPOTENCY_LOCK_SECONDS'>,
    private readonly logger?: Logger,
  ) {}

  /**
   * Claims `key` of `userId` for an operation (`fingerprint` from its text and variables). One of
   * any number of racing claims inserts the row; the others read it.
   */
  async claim(
    userId: string,
    key: string,
    operation: { query: string; operationName?: string | null; variables?: unknown },
  ): Promise<Claim> {
    checkIdempotencyKey(key);
    this.pruneNowAndThen();
    const keyHash = sha256(`idempotency\0${userId}\0${key}`);
    const secret = Buffer.from(crypto.hkdfSync('sha256', key, userId, 'idempotency answer', 32));
    const fingerprint = sha256(
      stableJson([operation.operationName ?? null, operation.query, operation.variables ?? {}]),
    );
    const repo = this.dataSource.getRepository(IdempotencyRecord);
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = Date.now();
      try {
        await repo.insert({
          keyHash,
          fingerprint,
          answer: null,
          lockedUntil: new Date(now + this.config.IDEMPOTENCY_LOCK_SECONDS * 1000),
          expiresAt: new Date(now + this.config.IDEMPOTENCY_TTL_SECONDS * 1000),
        });
        return { kind: 'run', keyHash, secret };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const row = await repo.findOneBy({ keyHash });
      if (!row) continue; // released or pruned meanwhile: claim again
      if (row.expiresAt.getTime() <= now) {
        await repo.delete({ keyHash, expiresAt: LessThan(new Date(now + 1)) });
        continue;
      }
      if (row.fingerprint !== fingerprint)
        return {
          kind: 'refused',
          error: new AppError(
            'conflict',
            'This Idempotency-Key was used with another request; use a new key for a new request.',
            { reason: 'idempotency_key_reused' },
          ),
        };
      if (row.answer !== null) return { kind: 'replay', answer: decrypt(row.answer, secret) };
      if (row.lockedUntil && row.lockedUntil.getTime() > now)
        return {
          kind: 'refused',
          error: new AppError(
            'conflict',
            'A request with this Idempotency-Key is still running; retry when it has finished.',
            { reason: 'idempotency_key_in_use' },
            RUNNING_RETRY_AFTER_SECONDS,
          ),
        };
      // The first request's process died before it recorded an answer: take the claim over.
      const taken = await repo.update(
        { keyHash, answer: IsNull(), lockedUntil: row.lockedUntil ?? IsNull() },
        { lockedUntil: new Date(now + this.config.IDEMPOTENCY_LOCK_SECONDS * 1000) },
      );
      if ((taken.affected ?? 0) === 1) return { kind: 'run', keyHash, secret };
    }
    throw new AppError('service_unavailable', 'The Idempotency-Key could not be claimed; try again.');
  }

  /** Keeps the answer for replays, or releases the key when the answer is one a retry should not get. */
  async record(claim: Extract<Claim, { kind: 'run' }>, answer: StoredAnswer): Promise<void> {
    const repo = this.dataSource.getRepository(IdempotencyRecord);
    const codes = (answer.errors ?? []).map((e) => (e as { extensions?: { code?: string } }).extensions?.code);
    if (codes.some((c) => c !== undefined && TRANSIENT.has(c))) {
      await repo.delete({ keyHash: claim.keyHash });
      return;
    }
    await repo.update({ keyHash: claim.keyHash }, { answer: encrypt(answer, claim.secret), lockedUntil: null });
  }

  /** Expired keys go, at most once a minute per process, in the background. */
  private pruneNowAndThen() {
    const now = Date.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    this.dataSource
      .getRepository(IdempotencyRecord)
      .delete({ expiresAt: LessThan(new Date(now)) })
      .catch((err: unknown) => this.logger?.warn({ err }, 'pruning expired idempotency keys failed'));
  }
}

function encrypt(answer: StoredAnswer, secret: Buffer): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', secret, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function decrypt(stored: string, secret: Buffer): StoredAnswer {
  const bytes = Buffer.from(stored, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', secret, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return JSON.parse(
    Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8'),
  ) as StoredAnswer;
}
