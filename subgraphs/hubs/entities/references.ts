import { Directive, Field, ID, ObjectType } from 'type-graphql';

// Other subgraphs' entities, known here only by their keys: the gateway asks the owning
// subgraph (notes, vault, tts) for the rest, and its reference resolver checks the caller.

@Directive('@key(fields: "id", resolvable: false)')
@ObjectType('Note')
export class NoteReference {
  @Field(() => ID)
  id!: string;
}

@Directive('@key(fields: "id", resolvable: false)')
@ObjectType('VaultItem')
export class VaultItemReference {
  @Field(() => ID)
  id!: string;
}

@Directive('@key(fields: "id", resolvable: false)')
@ObjectType('Voice')
export class VoiceReference {
  @Field(() => ID)
  id!: string;
}
