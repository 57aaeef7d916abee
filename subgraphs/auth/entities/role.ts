import { Field, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';

/** A role: a named set of scopes. The built-in `admin` and `user` are not stored (lib/scopes.ts ScopeCatalogue.builtInRoles). */
@RequiresScopes('admin:roles')
@ObjectType({ description: 'A named set of scopes that users hold (`admin` and `user` are built in and read-only).' })
@Entity('roles')
export class Role {
  @Field({ description: 'The id: `[a-z0-9_-]{1,32}`, never changes.' })
  @PrimaryColumn({ type: 'varchar', length: 32 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 200, nullable: true })
  description!: string | null;

  /** Comma-separated scope names. */
  @Column({ name: 'scopes', type: 'varchar', length: 1024 })
  scopeList!: string;

  @Field(() => [String], { description: 'The scopes a holder of this role has.' })
  get scopes(): string[] {
    return this.scopeList ? this.scopeList.split(',') : [];
  }

  @Field(() => Boolean, { description: 'The built-in roles cannot be changed or deleted.' })
  builtIn = false;

  @Field(() => Int, { description: '1 when created; every change adds 1. PATCH and DELETE name it.' })
  @Column({ type: 'integer', default: 1 })
  version!: number;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field()
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
