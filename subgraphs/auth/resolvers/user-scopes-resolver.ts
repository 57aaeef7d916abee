// A user's scopes: the union of their roles' (subgraphs/auth/roles.ts). Read through an API key,
// the caller's own record (`me`) answers what the key can do instead: the key's scopes ∩ the
// owner's current ones.
import { FieldResolver, Resolver, Root } from 'type-graphql';
import { User } from '../entities/user';
import type { RoleAdministration } from '../roles';

/** The `me` records read through an API key, and the scopes that key has now (the request's own object). */
const keyScopes = new WeakMap<User, ReadonlySet<string>>();

/** Marks `user` (a record read for this request) as seen through an API key holding `scopes`. */
export function seenThroughKey(user: User, scopes: ReadonlySet<string>): User {
  keyScopes.set(user, scopes);
  return user;
}

@Resolver(() => User)
export class UserScopesResolver {
  constructor(private readonly roles: RoleAdministration) {}

  @FieldResolver(() => [String], {
    description:
      "The scopes the user's roles give, in the contract's order. In `me` through an API key: what the key can do (its scopes ∩ the owner's).",
  })
  async scopes(@Root() user: User): Promise<string[]> {
    const ofRoles = await this.roles.scopesOfRoles(user.roles);
    const key = keyScopes.get(user);
    return key ? ofRoles.filter((s) => key.has(s)) : ofRoles;
  }
}
