import { FieldResolver, Resolver, Root } from 'type-graphql';
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
}
