import { Args, ArgsType, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { MaxLength, MinLength } from 'class-validator';
import { IdArgs } from '../../../lib/arguments';
import { AppError } from '../../../lib/errors';
import { loginAttempts } from '../metrics';
import { Authenticated } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { TrimmedLength } from '../../../lib/validators';
import { AuthService } from '../auth-service';
import { Session } from '../entities/session';
import { User } from '../entities/user';
import { seenThroughKey } from './user-scopes-resolver';

@ArgsType()
export class LoginArgs {
  @Field()
  @TrimmedLength(1, 64)
  username!: string;

  @Field()
  @MinLength(8)
  @MaxLength(1024)
  password!: string;
}

@ArgsType()
class RefreshArgs {
  @Field()
  @MinLength(1)
  @MaxLength(8192)
  refreshToken!: string;
}

@ObjectType({ description: 'Tokens of a session: a short-lived access token and a refresh token.' })
export class TokenSet {
  @Field() accessToken!: string;
  @Field() refreshToken!: string;
  @Field(() => Int, { description: 'Lifetime of the access token in seconds.' }) expiresIn!: number;
  @Field({ description: 'Always "Bearer".' }) tokenType!: string;
  @Field(() => ID) sessionId!: string;
}

@Resolver()
export class AuthResolver {
  constructor(private readonly auth: AuthService) {}

  @Mutation(() => TokenSet, { description: 'Log in with username and password; creates a session.' })
  async login(@Args() { username, password }: LoginArgs, @Ctx() ctx: SubgraphContext): Promise<TokenSet> {
    try {
      const tokens = await this.auth.login(username, password, { ip: ctx.clientIp, userAgent: ctx.userAgent });
      loginAttempts.inc({ outcome: 'success' });
      return tokens;
    } catch (err) {
      const code = err instanceof AppError ? err.code : undefined;
      if (code === 'unauthorized') loginAttempts.inc({ outcome: 'failure' });
      if (code === 'rate_limit_exceeded') loginAttempts.inc({ outcome: 'limited' });
      throw err;
    }
  }

  @Mutation(() => TokenSet, { description: 'Exchange a refresh token for a new token set (the old one is spent).' })
  refreshSession(@Args() { refreshToken }: RefreshArgs, @Ctx() ctx: SubgraphContext): Promise<TokenSet> {
    return this.auth.refresh(refreshToken, { ip: ctx.clientIp, userAgent: ctx.userAgent });
  }

  @Authenticated()
  @Mutation(() => Session, { description: "Revoke the caller's session and every token issued in it." })
  logout(@Ctx() ctx: SubgraphContext): Promise<Session> {
    return this.auth.logout(ctx.principal!);
  }

  @Authenticated()
  @Query(() => Session, { description: "The session of the caller's token." })
  currentSession(@Ctx() ctx: SubgraphContext): Promise<Session> {
    return this.auth.activeSession(ctx.principal!, ctx);
  }

  @Authenticated()
  @Query(() => Session, { description: 'A session of the caller, by id.' })
  session(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Session> {
    return this.auth.sessionOf(ctx.principal!, id);
  }

  @Authenticated()
  @Query(() => User, {
    description:
      "The calling user: `roles` are the roles the user holds; `scopes` what this credential can do (with an API key, the key's scopes ∩ the user's).",
  })
  async me(@Ctx() ctx: SubgraphContext): Promise<User> {
    const user = (await this.auth.findUser(ctx.principal!.userId))!;
    return ctx.principal!.apiKey ? seenThroughKey(user, ctx.scopes ?? new Set()) : user;
  }
}
