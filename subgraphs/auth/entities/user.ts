import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Authenticated } from '../../../lib/scopes';

@Directive('@key(fields: "id")')
@Authenticated()
@ObjectType({ description: 'A person who can log in.' })
@Entity('users')
export class User {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field({ description: 'The name as it was given, trimmed.' })
  @Column({ type: 'varchar', length: 64 })
  username!: string;

  /** Lower-cased username: the unique login key on every database collation. */
  @Column({ name: 'username_key', type: 'varchar', length: 64, unique: true })
  usernameKey!: string;

  /** argon2id hash; never leaves this subgraph. */
  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash!: string;

  /** Comma-separated role names. */
  @Column({ name: 'roles', type: 'varchar', length: 255 })
  roleList!: string;

  @Field(() => [String], { description: 'The roles the user holds (`admin`, `user`, or custom ones).' })
  get roles(): string[] {
    return this.roleList ? this.roleList.split(',') : [];
  }

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field({ description: 'A disabled user cannot log in; their sessions were revoked when it was disabled.' })
  @Column({ type: 'boolean', default: false })
  disabled!: boolean;

  @Field(() => Date, { nullable: true, description: 'The last successful login; null when never.' })
  @Column({ name: 'last_login_at', type: 'datetime', precision: 3, nullable: true })
  lastLoginAt!: Date | null;

  @Field(() => Int, {
    description: '1 when created; every change (disable, enable, password) adds 1. deleteUser must name it.',
  })
  @Column({ type: 'integer', default: 1 })
  version!: number;
}
