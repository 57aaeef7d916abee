import { Authenticated } from './scopes';
import { Directive, Field, ID, ObjectType } from 'type-graphql';

/** The auth subgraph's User, known here only by its key; the gateway fetches the rest. */
@Authenticated()
@Directive('@key(fields: "id", resolvable: false)')
@ObjectType('User')
export class UserReference {
  @Field(() => ID)
  id!: string;
}
