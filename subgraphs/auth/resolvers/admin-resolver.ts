// Administering users (scope `admin:users`) and roles (scope `admin:roles`); the pipeline's scope
// step refuses everyone else (`forbidden`).
import { ArrayMaxSize, IsInt, IsOptional, Matches, MaxLength, Min } from 'class-validator';
import { Args, ArgsType, Ctx, Field, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { IdArgs, VersionedIdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { Role } from '../entities/role';
import { Actor, RoleAdministration } from '../roles';
import { User } from '../entities/user';
import { UserAdministration } from '../user-admin';
import { LoginArgs } from './auth-resolver';

@ArgsType()
class CreateUserArgs extends LoginArgs {
  @Field(() => [String], {
    defaultValue: ['user'],
    description: 'Role names, e.g. ["admin"]; `user` when left out. You give only scopes you hold.',
  })
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

const ROLE_NAME_RULE = { message: 'must be 1 to 32 of a-z, 0-9, _ and -' };
const SCOPE_LIST = { description: 'Scope names (lib/scopes.ts); an unknown one is a validation_error.' };

@ArgsType()
class RoleNameArgs {
  @Field()
  @Matches(/^[a-z0-9_-]{1,32}$/, ROLE_NAME_RULE)
  name!: string;
}

@ArgsType()
class VersionedRoleArgs extends RoleNameArgs {
  @Field(() => Int, { description: 'The version the caller expects; another is `conflict` with currentVersion.' })
  @IsInt()
  @Min(1)
  version!: number;
}

@ArgsType()
class CreateRoleArgs extends RoleNameArgs {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(200)
  description?: string | null;

  @Field(() => [String], SCOPE_LIST)
  @ArrayMaxSize(64)
  @MaxLength(64, { each: true })
  scopes!: string[];
}

@ArgsType()
class UpdateRoleArgs extends VersionedRoleArgs {
  @Field(() => String, { nullable: true, description: 'Left out: unchanged; null: cleared.' })
  @IsOptional()
  @MaxLength(200)
  description?: string | null;

  @Field(() => [String], { ...SCOPE_LIST, nullable: true, description: 'Left out: unchanged. The new full set.' })
  @IsOptional()
  @ArrayMaxSize(64)
  @MaxLength(64, { each: true })
  scopes?: string[] | null;
}

@ArgsType()
class SetUserRolesArgs extends VersionedIdArgs {
  @Field(() => [String], { description: 'The full set of role names the user holds from now on.' })
  @ArrayMaxSize(32)
  @Matches(/^[a-z0-9_-]{1,32}$/, { ...ROLE_NAME_RULE, each: true })
  roles!: string[];
}

/** The caller as the role rules see them: who, and the scopes they hold now. */
const actorOf = (ctx: SubgraphContext): Actor => ({ userId: ctx.principal!.userId, scopes: ctx.scopes ?? new Set() });

@Resolver()
export class AdminResolver {
  constructor(
    private readonly admin: UserAdministration,
    private readonly roleAdmin: RoleAdministration,
  ) {}

  @RequiresScopes('admin:users')
  @Query(() => UserPage, {
    description: 'Users in username order, optionally those whose name starts with `query` (admins only).',
  })
  users(@Args() { query, first, after }: UsersArgs): Promise<Page<User>> {
    return this.admin.list(first, query, after);
  }

  @RequiresScopes('admin:users')
  @Query(() => User, { description: 'A user by id (admins only).' })
  user(@Args() { id }: IdArgs): Promise<User> {
    return this.admin.get(id);
  }

  @RequiresScopes('admin:users')
  @Mutation(() => User, {
    description:
      'Create a user (admins only). `conflict` when the username is taken; the password must pass the policy.',
  })
  async createUser(@Args() { username, password, roles }: CreateUserArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    await this.roleAdmin.checkAssignable(actorOf(ctx), roles);
    return this.admin.create(ctx.principal!.userId, username, password, roles);
  }

  @RequiresScopes('admin:users')
  @Mutation(() => User, {
    description:
      'Disable a user: their login is refused and every session of theirs is revoked at once. Not yourself, nor the last administrator.',
  })
  disableUser(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.disable(ctx.principal!.userId, id);
  }

  @RequiresScopes('admin:users')
  @Mutation(() => User, { description: 'Enable a disabled user; they log in again (their old sessions stay revoked).' })
  enableUser(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.enable(ctx.principal!.userId, id);
  }

  @RequiresScopes('admin:users')
  @Mutation(() => User, {
    description:
      "Clear the user's failed-login counts (from every client address) and the lock on their username across addresses.",
  })
  unlockUser(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.unlock(ctx.principal!.userId, id);
  }

  @RequiresScopes('admin:users')
  @Mutation(() => User, {
    description:
      'Delete a user at the given version (`conflict` with currentVersion when it has another). Their sessions end at once; ' +
      'what they own elsewhere (voices, syntheses) is deleted on the `user.deleted` event. Not yourself, nor the last administrator.',
  })
  deleteUser(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.admin.delete(ctx.principal!.userId, id, version);
  }

  @RequiresScopes('admin:roles')
  @Mutation(() => User, {
    description:
      "Set the roles a user holds, at the user's version. You give and take only scopes you hold; no one takes `admin` from the " +
      'last enabled administrator (`conflict`). Their next request has the new scopes, without a new login.',
  })
  setUserRoles(@Args() { id, version, roles }: SetUserRolesArgs, @Ctx() ctx: SubgraphContext): Promise<User> {
    return this.roleAdmin.setUserRoles(actorOf(ctx), id, version, roles);
  }

  @RequiresScopes('admin:roles')
  @Query(() => [Role], { description: 'Every role: the built-in ones, then the custom ones by name.' })
  roles(): Promise<Role[]> {
    return this.roleAdmin.list();
  }

  @RequiresScopes('admin:roles')
  @Query(() => Role, { description: 'A role by name.' })
  role(@Args() { name }: RoleNameArgs): Promise<Role> {
    return this.roleAdmin.get(name);
  }

  @RequiresScopes('admin:roles')
  @Mutation(() => Role, {
    description: 'Create a custom role. You give only scopes you hold; a name taken already is `conflict`.',
  })
  createRole(@Args() { name, description, scopes }: CreateRoleArgs, @Ctx() ctx: SubgraphContext): Promise<Role> {
    return this.roleAdmin.create(actorOf(ctx), name, description, scopes);
  }

  @RequiresScopes('admin:roles')
  @Mutation(() => Role, {
    description:
      "Change a custom role at its version; each holder's next request has the new scopes. The built-in roles are read-only.",
  })
  updateRole(
    @Args() { name, version, description, scopes }: UpdateRoleArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Role> {
    return this.roleAdmin.update(actorOf(ctx), name, version, { description, scopes: scopes ?? undefined });
  }

  @RequiresScopes('admin:roles')
  @Mutation(() => Role, {
    description: 'Delete a custom role at its version; `conflict` with details.users while anyone holds it.',
  })
  deleteRole(@Args() { name, version }: VersionedRoleArgs, @Ctx() ctx: SubgraphContext): Promise<Role> {
    return this.roleAdmin.delete(actorOf(ctx), name, version);
  }
}
