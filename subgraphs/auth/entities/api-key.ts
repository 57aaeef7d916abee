import { Field, ID, ObjectType } from 'type-graphql';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

const jsonList = {
  to: (v: string[]) => JSON.stringify(v),
  from: (v: string) => JSON.parse(v) as string[],
};

/** A key for scripts and partner services (docs/integrations.md). The key itself is never stored: only its keyed hash. */
@RequiresScopes('account:write')
@ObjectType({ description: 'An API key: works as a Bearer token with its own scopes. The key itself was shown once.' })
@Entity('api_keys')
@Index(['userId', 'id'])
export class ApiKey {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field(() => ID, { description: 'Its owner.' })
  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  @Field()
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Field({ description: 'The first characters of the key, to recognise it (`fvk_` and 8 more).' })
  @Column({ type: 'varchar', length: 16 })
  prefix!: string;

  /** HMAC-SHA256 of the key (API_KEY_HASH_SECRET): looked up by this unique index. */
  @Index({ unique: true })
  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash!: string;

  @Field(() => [String], { description: 'What it may do, at most: it never has more than its owner has now.' })
  @Column({ type: 'text', transformer: jsonList })
  scopes!: string[];

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field()
  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;

  @Field(() => Date, { nullable: true, description: 'When it was last used (written at most once a minute).' })
  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt!: Date | null;

  /** Revoked keys are kept (their tokens are refused by id) but never listed. */
  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt!: Date | null;
}
