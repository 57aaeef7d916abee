import { ValidateIf } from 'class-validator';
import { Args, ArgsType, Ctx, Field, FieldResolver, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { IdArgs, VersionedIdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { UserReference } from '../../../lib/user-reference';
import { TrimmedLength } from '../../../lib/validators';
import { ExampleItem } from '../entities/example-item';
import { ExampleItemService } from '../example-item-service';

/** What a client sets on create. A new field goes here and in ExampleItemChanges (and the entity, migration, routes.ts). */
@ArgsType()
class ExampleItemFields {
  @Field({ description: '1 to 200 characters, trimmed.' })
  @TrimmedLength(1, 200)
  title!: string;
}

/** What an update may change: each left out stays as it is (null is refused where the field is required). */
@ArgsType()
class ExampleItemChanges {
  @Field({ nullable: true, description: '1 to 200 characters, trimmed.' })
  @ValidateIf((_, value) => value !== undefined)
  @TrimmedLength(1, 200)
  title?: string;
}

@ObjectType({ description: "A page of the caller's example items, oldest first." })
class ExampleItemPage extends PageOf(ExampleItem) {}

@Resolver(() => ExampleItem)
export class ExampleItemResolver {
  constructor(private readonly service: ExampleItemService) {}

  @RequiresScopes('examples:write')
  @Mutation(() => ExampleItem, { description: 'Create: the new example item starts at version 1.' })
  createExampleItem(@Args() fields: ExampleItemFields, @Ctx() ctx: SubgraphContext): Promise<ExampleItem> {
    return this.service.create(ctx.principal!.userId, fields);
  }

  @RequiresScopes('examples:write')
  @Mutation(() => ExampleItem, {
    description: 'Change the example item at the given version; `conflict` (with currentVersion) when it has another.',
  })
  updateExampleItem(
    @Args() { id, version }: VersionedIdArgs,
    @Args() changes: ExampleItemChanges,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ExampleItem> {
    return this.service.update(ctx.principal!.userId, id, version, changes);
  }

  @RequiresScopes('examples:write')
  @Mutation(() => ExampleItem, {
    description: 'Delete the example item at the given version; `conflict` (with currentVersion) when it has another.',
  })
  deleteExampleItem(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<ExampleItem> {
    return this.service.delete(ctx.principal!.userId, id, version);
  }

  @RequiresScopes('examples:read')
  @Query(() => ExampleItem, { description: "One of the caller's example items." })
  exampleItem(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<ExampleItem> {
    return this.service.get(ctx.principal!.userId, id);
  }

  @RequiresScopes('examples:read')
  @Query(() => ExampleItemPage, { description: "The caller's example items, oldest first, a page at a time." })
  exampleItems(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<ExampleItem>> {
    return this.service.list(ctx.principal!.userId, first, after);
  }

  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() item: ExampleItem): UserReference {
    return { id: item.ownerId };
  }
}
