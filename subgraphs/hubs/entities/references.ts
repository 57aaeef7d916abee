import { Directive, Field, ID, ObjectType } from 'type-graphql';
import { RequiresScopes } from '../../../lib/scopes';

// Other subgraphs' entities, known here only by their keys: the gateway asks the owning
// subgraph (notes, vault, tts) for the rest, and its reference resolver checks the caller. Each
// declares the read scope of its owner, as the owner's own type does (docs/roles-and-scopes.md).

@Directive('@key(fields: "id", resolvable: false)')
@RequiresScopes('notes:read')
@ObjectType('Note')
export class NoteReference {
  @Field(() => ID)
  id!: string;
}

@Directive('@key(fields: "id", resolvable: false)')
@RequiresScopes('vault:read')
@ObjectType('VaultItem')
export class VaultItemReference {
  @Field(() => ID)
  id!: string;
}

@Directive('@key(fields: "id", resolvable: false)')
@RequiresScopes('tts:read')
@ObjectType('Voice')
export class VoiceReference {
  @Field(() => ID)
  id!: string;
}
