import { IsIn, IsInt, IsOptional, Max, MaxLength, Min } from 'class-validator';
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  ID,
  InputType,
  Int,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import { IdArgs, VersionedIdArgs } from '../../../lib/arguments';
import { AppError } from '../../../lib/errors';
import { OperationBudget } from '../../../lib/operation-budget';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { TrashEmptying, TrashEntry, TrashPage } from '../../../lib/kit/trash';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { UserReference } from '../../../lib/user-reference';
import { VaultClassification, VaultItem, VaultItemKind, VaultItemState } from '../entities/vault-item';
import { VaultRule, VaultRuleThen, VaultRuleWhen } from '../entities/vault-rule';
import type { VaultCapture } from '../capture';
import type { VaultTrash } from '../item-trash';
import type { VaultRules } from '../rule-service';
import type { VaultService } from '../vault-service';
import { failureMessage } from '../failure-messages';

/** The most one `chunk` reads. */
const MAX_READ_BYTES = 1024 * 1024;

@InputType({ description: 'A file to capture.' })
class VaultFileInput {
  @Field({ description: 'Its name, 1 to 255 characters.' })
  @MaxLength(255)
  name!: string;

  @Field(() => String, {
    nullable: true,
    description: 'What the sender says it is; the stored type is sniffed from the bytes.',
  })
  @IsOptional()
  @MaxLength(255)
  mediaType?: string | null;

  @Field({ description: 'The bytes, base64 (RFC 4648 with padding), at most VAULT_MAX_FILE_BYTES decoded.' })
  contentBase64!: string;
}

@ArgsType()
class CaptureArgs {
  @Field(() => String, {
    nullable: true,
    description: 'A link to fetch (http or https); with `text`, where the text came from.',
  })
  @IsOptional()
  url?: string | null;

  @Field(() => String, { nullable: true, description: 'A text to keep.' })
  @IsOptional()
  text?: string | null;

  @Field(() => String, {
    nullable: true,
    description: "A title (links and files take the page's or the name otherwise).",
  })
  @IsOptional()
  title?: string | null;

  @Field(() => VaultFileInput, { nullable: true })
  @IsOptional()
  file?: VaultFileInput | null;

  @Field(() => [String], { nullable: true, description: 'Your tags (source `user`).' })
  @IsOptional()
  tags?: string[] | null;

  @Field(() => String, {
    nullable: true,
    description: 'A category set by hand (classification.by: user); the classifier learns it.',
  })
  @IsOptional()
  category?: string | null;

  @Field(() => Boolean, { nullable: true })
  @IsOptional()
  favorite?: boolean | null;

  @Field(() => Date, {
    nullable: true,
    description:
      "When it was captured elsewhere (an import: a bookmark's ADD_DATE), from 1970 to now; left out: now. Listings stay in capture order.",
  })
  @IsOptional()
  capturedAt?: Date | null;
}

@ArgsType()
class ItemChangesArgs {
  @Field(() => String, { nullable: true, description: 'Left out: unchanged; null: cleared.' })
  @IsOptional()
  title?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Set by hand: classification.by becomes `user` and the classifier learns it. Null clears it.',
  })
  @IsOptional()
  category?: string | null;

  @Field(() => [String], {
    nullable: true,
    description: 'The whole list; tags kept keep their source, new ones are `user`.',
  })
  @IsOptional()
  tags?: string[] | null;

  @Field(() => Boolean, { nullable: true })
  @IsOptional()
  favorite?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  @IsOptional()
  archived?: boolean | null;
}

@ArgsType()
class ItemFilterArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: '`link`, `text` or `file`.' })
  @IsOptional()
  @IsIn(Object.values(VaultItemKind))
  kind?: VaultItemKind | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(100)
  category?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(50)
  tag?: string | null;

  @Field(() => String, { nullable: true, description: '`pending`, `ready` or `failed`.' })
  @IsOptional()
  @IsIn(Object.values(VaultItemState))
  state?: VaultItemState | null;

  @Field(() => Boolean, { nullable: true, description: 'true: only items without a category.' })
  @IsOptional()
  unclassified?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  @IsOptional()
  favorite?: boolean | null;

  @Field(() => String, { nullable: true, defaultValue: 'false', description: '`false` (default), `true` or `all`.' })
  @IsOptional()
  @IsIn(['false', 'true', 'all'])
  archived?: 'false' | 'true' | 'all' | null;

  @Field(() => String, {
    nullable: true,
    description: "Full text over title, text and url (the database's index), best match first.",
  })
  @IsOptional()
  @MaxLength(500)
  q?: string | null;
}

@ArgsType()
class ChunkArgs {
  @Field(() => Int, { description: 'First byte, from 0.' })
  @IsInt()
  @Min(0)
  offset!: number;

  @Field(() => Int, { description: `Bytes wanted, 1 to ${MAX_READ_BYTES}; fewer come back at the end.` })
  @IsInt()
  @Min(1)
  @Max(MAX_READ_BYTES)
  length!: number;
}

@ArgsType()
class RuleArgs {
  @Field({ description: '1 to 100 characters.' })
  @MaxLength(100)
  name!: string;

  @Field(() => Int, { nullable: true, defaultValue: 100, description: 'Lower runs first.' })
  @IsOptional()
  priority?: number;

  @Field(() => VaultRuleWhen)
  when!: VaultRuleWhen;

  @Field(() => VaultRuleThen)
  then!: VaultRuleThen;
}

@ArgsType()
class RuleChangesArgs {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(100)
  name?: string;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  priority?: number;

  @Field(() => VaultRuleWhen, { nullable: true, description: 'Replaces the conditions.' })
  @IsOptional()
  when?: VaultRuleWhen;

  @Field(() => VaultRuleThen, { nullable: true, description: 'Replaces the actions.' })
  @IsOptional()
  then?: VaultRuleThen;
}

@ObjectType({ description: "A page of the caller's vault items: newest first, or best match first with `q`." })
class VaultItemPage extends PageOf(VaultItem) {}

@RequiresScopes('vault:read')
@ObjectType({ description: "The caller's rules (at most VAULT_RULES_PER_USER), in the order they run." })
class VaultRuleList {
  @Field(() => [VaultRule])
  items!: VaultRule[];
}

@RequiresScopes('vault:read')
@ObjectType({ description: 'A category or a tag and how many of your items have it.' })
class VaultCount {
  @Field()
  name!: string;

  @Field(() => Int)
  count!: number;
}

@RequiresScopes('vault:read')
@ObjectType({ description: "A file item's stored bytes." })
class VaultItemContent {
  @Field(() => ID)
  id!: string;

  @Field(() => Int)
  bytes!: number;

  @Field({ description: 'The type sniffed from the bytes (application/octet-stream until it is).' })
  contentType!: string;

  @Field()
  fileName!: string;

  @Field()
  etag!: string;

  ownerId!: string;
}

@Resolver(() => VaultItem)
export class VaultItemResolver {
  constructor(
    private readonly service: VaultService,
    private readonly captures: VaultCapture,
    private readonly trash: VaultTrash,
    private readonly emptyTrash: (ownerId: string) => Promise<TrashEmptying> = () => {
      throw new Error('no trash queue');
    },
  ) {}

  @RequiresScopes('vault:write')
  @Mutation(() => VaultItem, {
    description:
      'Capture a link (`url`), a text (`text`, with `title` and `url` if you like) or a file (`file`). It starts `pending` ' +
      'and is enriched in the background. The same normalised URL or the same file bytes already in your vault: ' +
      '`conflict` with `existingId`.',
  })
  captureVaultItem(@Args() input: CaptureArgs, @Ctx() ctx: SubgraphContext): Promise<VaultItem> {
    return this.captures.capture(ctx.principal!.userId, input);
  }

  @RequiresScopes('vault:write')
  @Mutation(() => VaultItem, { description: 'Change an item at the version you expect.' })
  updateVaultItem(
    @Args() { id, version }: VersionedIdArgs,
    @Args() changes: ItemChangesArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<VaultItem> {
    return this.service.update(ctx.principal!.userId, id, version, changes);
  }

  @RequiresScopes('vault:write')
  @Mutation(() => VaultItem, { description: 'Delete an item (and its file) at the version you expect.' })
  deleteVaultItem(
    @Args() { id, version }: VersionedIdArgs,
    @Arg('permanent', () => Boolean, {
      defaultValue: false,
      description: 'true: deleted at once; false (default): to the trash for TRASH_RETENTION_DAYS.',
    })
    permanent: boolean,
    @Ctx() ctx: SubgraphContext,
  ): Promise<VaultItem> {
    return this.service.delete(ctx.principal!.userId, id, version, permanent);
  }

  @RequiresScopes('vault:write')
  @Mutation(() => VaultItem, { description: 'Bring an item back from the trash: its tags, file and hub nodes.' })
  restoreVaultItem(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<VaultItem> {
    return this.trash.restore(ctx.principal!.userId, id);
  }

  @RequiresScopes('vault:write')
  @Mutation(() => TrashEntry, {
    description: 'Delete an item in the trash (and its file) for good (vault.item.deleted).',
  })
  async purgeVaultItem(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<TrashEntry> {
    const item = await this.trash.purge(ctx.principal!.userId, id);
    return {
      type: 'vault_item',
      id: item.id,
      title: item.title ?? '',
      deletedAt: item.deletedAt!,
      purgeAt: new Date(),
    };
  }

  @RequiresScopes('vault:write')
  @Mutation(() => TrashEmptying, {
    description: 'Purge every item in your trash, in the background (past JOBS_PENDING_PER_USER: rate_limit_exceeded).',
  })
  emptyVaultTrash(@Ctx() ctx: SubgraphContext): Promise<TrashEmptying> {
    return this.emptyTrash(ctx.principal!.userId);
  }

  @RequiresScopes('vault:read')
  @Query(() => TrashPage, {
    description: 'Your vault items in the trash, the last trashed first (a part of GET /trash).',
  })
  trashedVaultItems(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<TrashEntry>> {
    return this.trash.trashed(ctx.principal!.userId, first, after);
  }

  @RequiresScopes('vault:write')
  @Mutation(() => VaultItem, { description: 'Enrich a link again: it becomes `pending`.' })
  refetchVaultItem(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<VaultItem> {
    return this.service.refetch(ctx.principal!.userId, id);
  }

  @RequiresScopes('vault:write')
  @Mutation(() => VaultItem, { description: 'Classify an item again now: rules, the learned classifier, keywords.' })
  classifyVaultItem(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<VaultItem> {
    return this.service.reclassify(ctx.principal!.userId, id);
  }

  @RequiresScopes('vault:read')
  @Query(() => VaultItem, { description: 'One of your vault items.' })
  vaultItem(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<VaultItem> {
    return this.service.get(ctx.principal!.userId, id);
  }

  @RequiresScopes('vault:read')
  @Query(() => VaultItemPage, { description: 'Your vault items, a page at a time; pages carry no `text`.' })
  vaultItems(
    @Args() { first, after, ...filters }: ItemFilterArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<VaultItem>> {
    return this.service.list(ctx.principal!.userId, filters, first, after);
  }

  @RequiresScopes('vault:read')
  @Query(() => [VaultCount], { description: 'Your categories and how many items each has.' })
  vaultCategories(@Ctx() ctx: SubgraphContext): Promise<VaultCount[]> {
    return this.service.counts(ctx.principal!.userId, 'category');
  }

  @RequiresScopes('vault:read')
  @Query(() => [VaultCount], { description: 'Your tags and how many items each has.' })
  vaultTags(@Ctx() ctx: SubgraphContext): Promise<VaultCount[]> {
    return this.service.counts(ctx.principal!.userId, 'tag');
  }

  @RequiresScopes('vault:read')
  @Query(() => VaultItemContent, { description: "A file item's bytes: size, sniffed type, name; read with `chunk`." })
  async vaultItemContent(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<VaultItemContent> {
    const c = await this.service.content(ctx.principal!.userId, id);
    return {
      id,
      bytes: c.bytes,
      contentType: c.contentType,
      fileName: c.fileName,
      etag: c.etag,
      ownerId: c.item.ownerId,
    };
  }

  @RequiresScopes('vault:read')
  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() item: VaultItem): UserReference {
    return { id: item.ownerId };
  }

  @RequiresScopes('vault:read')
  @FieldResolver(() => String, {
    nullable: true,
    description: 'What `error` means, in a sentence (for `blocked_address`: the setting that allows an internal host).',
  })
  errorMessage(@Root() item: VaultItem): string | null {
    return failureMessage(item.error);
  }

  @RequiresScopes('vault:read')
  @FieldResolver(() => VaultClassification)
  classification(@Root() item: VaultItem): VaultClassification {
    return {
      by: item.classifiedBy ?? null,
      ruleId: item.classifiedRuleId ?? null,
      confidence: item.classifiedConfidence ?? null,
    };
  }
}

@Resolver(() => VaultItemContent)
export class VaultContentResolver {
  private readonly budget: OperationBudget;

  constructor(
    private readonly service: VaultService,
    /** GRAPHQL_MAX_AUDIO_BYTES: the same per-operation ceiling as audio. */
    private readonly maxBytesPerOperation: number,
  ) {
    this.budget = new OperationBudget(maxBytesPerOperation);
  }

  @RequiresScopes('vault:read')
  @FieldResolver(() => String, {
    description:
      'Base64 of `length` bytes from `offset`. One operation reads at most GRAPHQL_MAX_AUDIO_BYTES over all its chunks.',
  })
  async chunk(@Root() content: VaultItemContent, @Args() { offset, length }: ChunkArgs, @Ctx() ctx: SubgraphContext) {
    if (!this.budget.take(ctx, Math.max(0, Math.min(length, content.bytes - offset))))
      throw new AppError('validation_error', `One operation may read at most ${this.maxBytesPerOperation} bytes.`, {
        length: [`would exceed ${this.maxBytesPerOperation} bytes in this operation`],
      });
    return (await this.service.chunk(ctx.principal!.userId, content.id, offset, length)).toString('base64');
  }
}

@Resolver(() => VaultRule)
export class VaultRuleResolver {
  constructor(private readonly rules: VaultRules) {}

  @RequiresScopes('vault:write')
  @Mutation(() => VaultRule, { description: 'A new classification rule (at most VAULT_RULES_PER_USER).' })
  createVaultRule(@Args() input: RuleArgs, @Ctx() ctx: SubgraphContext): Promise<VaultRule> {
    return this.rules.create(ctx.principal!.userId, input);
  }

  @RequiresScopes('vault:write')
  @Mutation(() => VaultRule, { description: 'Change a rule at the version you expect.' })
  updateVaultRule(
    @Args() { id, version }: VersionedIdArgs,
    @Args() changes: RuleChangesArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<VaultRule> {
    return this.rules.update(ctx.principal!.userId, id, version, changes);
  }

  @RequiresScopes('vault:write')
  @Mutation(() => VaultRule, { description: 'Delete a rule at the version you expect.' })
  deleteVaultRule(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<VaultRule> {
    return this.rules.delete(ctx.principal!.userId, id, version);
  }

  @RequiresScopes('vault:read')
  @Query(() => VaultRule, { description: 'One of your rules.' })
  vaultRule(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<VaultRule> {
    return this.rules.get(ctx.principal!.userId, id);
  }

  @RequiresScopes('vault:read')
  @Query(() => VaultRuleList, { description: 'All your rules (at most VAULT_RULES_PER_USER), in the order they run.' })
  async vaultRules(@Ctx() ctx: SubgraphContext): Promise<VaultRuleList> {
    return { items: await this.rules.list(ctx.principal!.userId) };
  }
}
