// A user's scopes: the union of their roles' (subgraphs/auth/roles.ts).
import { FieldResolver, Resolver, Root } from 'type-graphql';
import { User } from '../entities/user';
import type { RoleAdministration } from '../roles';

@Resolver(() => User)
export class UserScopesResolver {
  constructor(private readonly roles: RoleAdministration) {}

  @FieldResolver(() => [String], { description: "The scopes the user's roles give, in the contract's order." })
  scopes(@Root() user: User): Promise<string[]> {
    return this.roles.scopesOfRoles(user.roles);
  }
}
