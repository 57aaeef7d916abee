import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { SubgraphContext } from '../../../lib/subgraph';
import { AuthService } from '../auth-service';
import { Session } from '../entities/session';
import { User } from '../entities/user';

@Resolver(() => Session)
export class SessionResolver {
  constructor(private readonly auth: AuthService) {}

  @FieldResolver(() => User)
  async user(@Root() session: Session): Promise<User> {
    return (await this.auth.findUser(session.userId))!;
  }

  @FieldResolver(() => Boolean, { description: "Whether this is the session of the caller's token." })
  current(@Root() session: Session, @Ctx() ctx: SubgraphContext): boolean {
    return ctx.principal?.sessionId === session.id;
  }
}
