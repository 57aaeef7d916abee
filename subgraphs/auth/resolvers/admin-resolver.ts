// Administering users (role `admin`; everyone else gets `forbidden`).
import { ArrayMaxSize, IsOptional, Matches, MaxLength } from 'class-validator';
import { Args, ArgsType, Authorized, Ctx, Field, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { IdArgs, VersionedIdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import type { SubgraphContext } from '../../../lib/subgraph';
import { User } from '../entities/user';
import { UserAdministration } from '../user-admin';
import { LoginArgs } from './auth-resolver';

@ArgsType()
class CreateUserArgs extends LoginArgs {
  @Field(() => [String], { defaultValue: [], description: 'Role names, e.g. ["admin"].' })
  @ArrayMaxSize(10)
  @Matches(/^[a-z][a-z0-9_-]{0,31}$/, {
    each: true,
    message: 'each role must be a lower-case name of up to 32 characters',
  })
  roles!: string[];
}

@ArgsType()
class UsersArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: 'Only usernames starting with this (ignoring case).' })
  @IsOptional()
  @MaxLength(64)
  query?: string | null;
}

@ObjectType({ description: 'A page of users in username order.' })
class UserPage extends PageOf(User) {}

@Resolver()
export class AdminResolver {
  constructor(private readonly admin: UserAdministration) {}

  @Authorized('admin')
  @Query(() => UserPage, {
    description: 'Users in username order, optionally those whose name starts with `query` (admins only).',
  })
  users(@Args() { query, first, after }: UsersArgs): Promise<Page<User>> {
    return this.admin.list(first, query, after);
  }

  @Authorized('admin')
  @Query(() => User, { description: 'A user by id (admins only).' })
  user(@Args() { id }: IdArgs): Promise<User> {
    return this.admin.get(id);
  }

  @Authorized('admin')
  @Mutation(() => User, {
    description:
      'Create a user (admins only). `conflict` when the username is taken; the password must pass the policy.',
  })
  createUser(@Args() { username, password, roles }: CreateUserArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.create(ctx.principal!.userId, username, password, roles);
  }

  @Authorized('admin')
  @Mutation(() => User, {
    description:
      'Disable a user: their login is refused and every session of theirs is revoked at once. Not yourself, nor the last administrator.',
  })
  disableUser(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.disable(ctx.principal!.userId, id);
  }

  @Authorized('admin')
  @Mutation(() => User, { description: 'Enable a disabled user; they log in again (their old sessions stay revoked).' })
  enableUser(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.enable(ctx.principal!.userId, id);
  }

  @Authorized('admin')
  @Mutation(() => User, {
    description:
      "Clear the user's failed-login counts (from every client address) and the lock on their username across addresses.",
  })
  unlockUser(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.unlock(ctx.principal!.userId, id);
  }

  @Authorized('admin')
  @Mutation(() => User, {
    description:
      'Delete a user at the given version (`conflict` with currentVersion when it has another). Their sessions end at once; ' +
      'what they own elsewhere (voices, syntheses) is deleted on the `user.deleted` event. Not yourself, nor the last administrator.',
  })
  deleteUser(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.delete(ctx.principal!.userId, id, version);
  }
}
