import { Directive, Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { Authenticated } from '../../../lib/scopes';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

export enum SessionState {
  active = 'active',
  revoked = 'revoked',
  expired = 'expired',
}
registerEnumType(SessionState, { name: 'SessionState' });

@Directive('@key(fields: "id")')
@Authenticated()
@ObjectType({ description: 'A login: the tokens issued for it live and die with it.' })
@Entity('sessions')
@Index(['userId', 'createdAt'])
export class Session {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field(() => ID)
  @Index()
  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId!: string;

  /** Stored state: active or revoked. `expired` is derived from refreshExpiresAt. */
  @Column({ name: 'state', type: 'varchar', length: 16 })
  storedState!: 'active' | 'revoked';

  @Field({ description: 'When the session was created (login).' })
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field({ description: 'Expiry of the latest access token issued in this session.' })
  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;

  @Field({ description: 'Last time a token of this session was used (updated at most once a minute).' })
  @Column({ name: 'last_activity_at', type: 'datetime', precision: 3 })
  lastActivityAt!: Date;

  /** The only refresh token (its jti) that may be exchanged now; rotation replaces it. */
  @Column({ name: 'refresh_token_id', type: 'varchar', length: 36 })
  refreshTokenId!: string;

  @Column({ name: 'refresh_expires_at', type: 'datetime', precision: 3 })
  refreshExpiresAt!: Date;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'The User-Agent of the login, cut to 512 characters.' })
  @Column({ name: 'user_agent', type: 'varchar', length: 512, nullable: true })
  userAgent!: string | null;

  @Field(() => String, { nullable: true, description: 'The client address of the login.' })
  @Column({ name: 'ip_address', type: 'varchar', length: 64, nullable: true })
  ipAddress!: string | null;

  @Field(() => SessionState)
  get state(): SessionState {
    if (this.storedState === 'revoked') return SessionState.revoked;
    return this.refreshExpiresAt.getTime() <= Date.now() ? SessionState.expired : SessionState.active;
  }
}
