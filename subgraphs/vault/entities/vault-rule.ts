import { RequiresScopes } from '../../../lib/scopes';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { VaultItemKind } from './vault-item';

@ObjectType('VaultRuleWhen', { description: 'What an item must match; every condition given must hold.' })
@InputType('VaultRuleWhenInput')
export class VaultRuleWhen {
  @Field(() => String, { nullable: true, description: '`link`, `text` or `file`.' })
  kind?: VaultItemKind | null;

  @Field(() => String, { nullable: true, description: "The URL's host, or a parent domain of it (case-insensitive)." })
  urlHost?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'A glob over the whole URL (* within a segment, ** across /, ?, [classes], {a,b}).',
  })
  urlMatches?: string | null;

  @Field(() => [String], { nullable: true, description: 'Any of these in the title or text (case-insensitive).' })
  textContains?: string[] | null;

  @Field(() => String, { nullable: true, description: 'A media type, or a family such as image/*.' })
  mediaType?: string | null;
}

@ObjectType('VaultRuleThen', { description: 'What a matching rule does.' })
@InputType('VaultRuleThenInput')
export class VaultRuleThen {
  @Field(() => String, { nullable: true, description: 'The first matching rule that sets a category wins.' })
  category?: string | null;

  @Field(() => [String], { nullable: true, description: 'Added with source `rule` by every matching rule.' })
  tags?: string[] | null;

  @Field(() => Boolean, { nullable: true })
  favorite?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  archive?: boolean | null;
}

// The same fields as a rule shows them. An input type cannot carry a scope declaration and
// type-graphql does not inherit fields from an input type into an object type, hence the copies.
@RequiresScopes('vault:read')
@ObjectType('VaultRuleWhen', { description: 'What an item must match; every condition given must hold.' })
export class VaultRuleWhenShown implements VaultRuleWhen {
  @Field(() => String, { nullable: true, description: '`link`, `text` or `file`.' })
  kind?: VaultItemKind | null;

  @Field(() => String, { nullable: true, description: "The URL's host, or a parent domain of it (case-insensitive)." })
  urlHost?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'A glob over the whole URL (* within a segment, ** across /, ?, [classes], {a,b}).',
  })
  urlMatches?: string | null;

  @Field(() => [String], { nullable: true, description: 'Any of these in the title or text (case-insensitive).' })
  textContains?: string[] | null;

  @Field(() => String, { nullable: true, description: 'A media type, or a family such as image/*.' })
  mediaType?: string | null;
}

@RequiresScopes('vault:read')
@ObjectType('VaultRuleThen', { description: 'What a matching rule does.' })
export class VaultRuleThenShown implements VaultRuleThen {
  @Field(() => String, { nullable: true, description: 'The first matching rule that sets a category wins.' })
  category?: string | null;

  @Field(() => [String], { nullable: true, description: 'Added with source `rule` by every matching rule.' })
  tags?: string[] | null;

  @Field(() => Boolean, { nullable: true })
  favorite?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  archive?: boolean | null;
}

const json = <T>() => ({
  to: (value: T | undefined) => (value === undefined ? undefined : JSON.stringify(value)),
  from: (value: string) => JSON.parse(value) as T,
});

@RequiresScopes('vault:read')
@ObjectType({ description: "One of a user's classification rules; they run in priority order, lowest first." })
@Entity('vault_rules')
export class VaultRule {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field()
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Field(() => Int, { description: 'Lower runs first; ties in creation order.' })
  @Column({ type: 'integer' })
  priority!: number;

  @Field(() => VaultRuleWhenShown)
  @Column({ name: 'when_json', type: 'text', transformer: json<VaultRuleWhen>() })
  when!: VaultRuleWhen;

  @Field(() => VaultRuleThenShown)
  @Column({ name: 'then_json', type: 'text', transformer: json<VaultRuleThen>() })
  then!: VaultRuleThen;

  @Field(() => Int)
  @Column({ type: 'integer' })
  version!: number;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field()
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
