// A person's own account: their sessions, and their password.
import { MaxLength, MinLength } from 'class-validator';
import { Args, ArgsType, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { IdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { Authenticated, RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { AuthService } from '../auth-service';
import { Session } from '../entities/session';
import { User } from '../entities/user';

@ArgsType()
class ChangePasswordArgs {
  @Field()
  @MinLength(1)
  @MaxLength(1024)
  currentPassword!: string;

  @Field({
    description: '8 to 1024 characters, and hard to guess (zxcvbn score of at least PASSWORD_MIN_SCORE, 3 by default).',
  })
  @MinLength(8)
  @MaxLength(1024)
  newPassword!: string;
}

@ObjectType({ description: "A page of the caller's active sessions, newest first." })
class SessionPage extends PageOf(Session) {}

@Authenticated()
@ObjectType({ description: 'What revoking the other sessions did.' })
class SessionsRevoked {
  @Field(() => ID, { description: 'The session that stays: the one that asked.' }) currentSessionId!: string;
  @Field(() => Int, { description: 'How many sessions were revoked.' }) revoked!: number;
}

@Resolver()
export class AccountResolver {
  constructor(private readonly auth: AuthService) {}

  @RequiresScopes('account:write')
  @Query(() => SessionPage, {
    description: "The caller's active sessions, newest first; `current` marks the one asking.",
  })
  sessions(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<Session>> {
    return this.auth.listSessions(ctx.principal!, first, after);
  }

  @RequiresScopes('account:write')
  @Mutation(() => Session, { description: "Revoke one of the caller's sessions; another user's is `not_found`." })
  revokeSession(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Session> {
    return this.auth.revokeSession(ctx.principal!, id);
  }

  @RequiresScopes('account:write')
  @Mutation(() => SessionsRevoked, {
    description: 'Revoke every session of the caller except the one making this request.',
  })
  async revokeOtherSessions(@Ctx() ctx: SubgraphContext): Promise<SessionsRevoked> {
    const revoked = await this.auth.revokeOtherSessions(ctx.principal!);
    return { currentSessionId: ctx.principal!.sessionId, revoked };
  }

  @RequiresScopes('account:write')
  @Mutation(() => User, {
    description:
      "Change the caller's password. A wrong current password is `unauthorized` and counts toward the login limits; a new " +
      'password that is too easy to guess is a `validation_error` on newPassword. Every other session of the caller is revoked.',
  })
  changePassword(
    @Args() { currentPassword, newPassword }: ChangePasswordArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<User> {
    return this.auth.changePassword(ctx.principal!, currentPassword, newPassword, {
      ip: ctx.clientIp,
      userAgent: ctx.userAgent,
    });
  }
}
