import { ArrayMaxSize, ArrayMinSize, IsOptional, IsUUID, Length, ValidateIf } from 'class-validator';
import {
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  ID,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import { IdArgs, VersionedIdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { UserReference } from '../../../lib/user-reference';
import { WebhookAttempt } from '../entities/webhook-attempt';
import { Webhook } from '../entities/webhook';
import { WebhookService } from '../webhook-service';

@ArgsType()
class WebhookFields {
  @Field({ description: 'An http(s) URL; it must resolve to a public address when events are sent.' })
  @Length(1, 2048)
  url!: string;

  @Field(() => [String], { description: 'Types or patterns (`voice.*`, `*`): 1 to 50.' })
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  eventTypes!: string[];

  @Field(() => String, { nullable: true, description: 'Up to 500 characters.' })
  @IsOptional()
  @Length(0, 500)
  description?: string | null;

  @Field({ nullable: true, description: "Every user's audit events, not only yours: needs admin:integrations." })
  allUsers?: boolean;
}

/** Each left out stays as it is. */
@ArgsType()
class WebhookChanges {
  @Field({ nullable: true })
  @ValidateIf((_, value) => value !== undefined)
  @Length(1, 2048)
  url?: string;

  @Field(() => [String], { nullable: true })
  @ValidateIf((_, value) => value !== undefined)
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  eventTypes?: string[];

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 500)
  description?: string | null;

  @Field({ nullable: true, description: 'Turn sending off, or on again (what waited is then sent, in order).' })
  enabled?: boolean;
}

@ArgsType()
class WebhookAttemptsArgs extends PageArgs {
  @Field(() => ID)
  @IsUUID()
  webhookId!: string;
}

@RequiresScopes('account:write')
@ObjectType({ description: "A webhook's signing secret, shown only in this answer." })
class WebhookSecret {
  @Field(() => ID, { description: "The webhook's id." })
  id!: string;

  @Field({ description: '`whsec_…`: verify deliveries with it (Standard Webhooks).' })
  secret!: string;
}

@RequiresScopes('account:write')
@ObjectType({ description: 'One event queued for one webhook.' })
class WebhookDeliveryRef {
  @Field(() => ID, { description: 'The delivery: retry it with this id.' })
  id!: string;

  @Field(() => ID, { description: 'The webhook it goes to.' })
  webhookId!: string;

  @Field(() => ID, { description: 'The event id, sent as `webhook-id`.' })
  eventId!: string;
}

@ObjectType({ description: "A page of the caller's webhooks, oldest first." })
class WebhookPage extends PageOf(Webhook) {}

@ObjectType({ description: "A page of a webhook's delivery attempts, newest first." })
class WebhookAttemptPage extends PageOf(WebhookAttempt) {}

@Resolver(() => Webhook)
export class WebhookResolver {
  constructor(private readonly service: WebhookService) {}

  @RequiresScopes('account:write')
  @Mutation(() => WebhookSecret, { description: 'Create a webhook; its secret is in this answer only.' })
  async createWebhook(@Args() fields: WebhookFields, @Ctx() ctx: SubgraphContext): Promise<WebhookSecret> {
    const { webhook, secret } = await this.service.create(ctx.principal!, fields);
    return { id: webhook.id, secret };
  }

  @RequiresScopes('account:write')
  @Mutation(() => Webhook, {
    description: 'Change the webhook at the given version; `conflict` (with currentVersion) when it has another.',
  })
  updateWebhook(
    @Args() { id, version }: VersionedIdArgs,
    @Args() changes: WebhookChanges,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Webhook> {
    return this.service.update(ctx.principal!.userId, id, version, changes);
  }

  @RequiresScopes('account:write')
  @Mutation(() => Webhook, {
    description: 'Delete the webhook at the given version, with its deliveries and their log.',
  })
  deleteWebhook(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<Webhook> {
    return this.service.delete(ctx.principal!.userId, id, version);
  }

  @RequiresScopes('account:write')
  @Mutation(() => WebhookSecret, {
    description:
      'A new secret (in this answer only); the old one signs alongside it for a while (WEBHOOK_SECRET_OVERLAP_SECONDS).',
  })
  async rotateWebhookSecret(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<WebhookSecret> {
    const { webhook, secret } = await this.service.rotateSecret(ctx.principal!.userId, id);
    return { id: webhook.id, secret };
  }

  @RequiresScopes('account:write')
  @Mutation(() => WebhookDeliveryRef, { description: 'Send a `webhook.test` event to this webhook.' })
  testWebhook(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<WebhookDeliveryRef> {
    return this.service.sendTest(ctx.principal!.userId, id);
  }

  @RequiresScopes('account:write')
  @Mutation(() => WebhookDeliveryRef, {
    description: 'Send a delivery again, now, with the same `webhook-id` (delivered, given up or waiting).',
  })
  retryWebhookDelivery(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<WebhookDeliveryRef> {
    return this.service.retry(ctx.principal!.userId, id);
  }

  @RequiresScopes('account:write')
  @Query(() => Webhook, { description: "One of the caller's webhooks." })
  webhook(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Webhook> {
    return this.service.get(ctx.principal!.userId, id);
  }

  @RequiresScopes('account:write')
  @Query(() => WebhookPage, { description: "The caller's webhooks, oldest first, a page at a time." })
  webhooks(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<Webhook>> {
    return this.service.list(ctx.principal!.userId, first, after);
  }

  @RequiresScopes('account:write')
  @Query(() => WebhookAttemptPage, { description: "A webhook's delivery attempts (the delivery log), newest first." })
  webhookAttempts(
    @Args() { webhookId, first, after }: WebhookAttemptsArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<WebhookAttempt>> {
    return this.service.attempts(ctx.principal!.userId, webhookId, first, after);
  }

  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() item: Webhook): UserReference {
    return { id: item.ownerId };
  }
}
