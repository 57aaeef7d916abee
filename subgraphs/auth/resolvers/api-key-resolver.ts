// API keys (./api-keys.ts): your own (account:write), everyone's (admin:integrations), and the
// exchange the edge makes for a key's short-lived token.
import { ArrayMaxSize, IsInt, IsUUID, Length, Max, Min } from 'class-validator';
import { Args, ArgsType, Ctx, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { IdArgs } from '../../../lib/arguments';
import { AppError } from '../../../lib/errors';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { TrimmedLength } from '../../../lib/validators';
import { ApiKeys } from '../api-keys';
import { ApiKey } from '../entities/api-key';

@ArgsType()
class CreateApiKeyArgs {
  @Field({ description: '1 to 100 characters, trimmed: what the key is for.' })
  @TrimmedLength(1, 100)
  name!: string;

  @Field(() => [String], { description: 'What it may do (never account:write); it never has more than you have.' })
  @ArrayMaxSize(50)
  scopes!: string[];

  @Field(() => Int, { defaultValue: 90, description: 'Days until it expires, 1 to 365.' })
  @IsInt()
  @Min(1)
  @Max(365)
  expiresInDays!: number;
}

@ArgsType()
class ExchangeApiKeyArgs {
  @Field()
  @Length(1, 256)
  key!: string;
}

@ArgsType()
class ApiKeyIdArgs {
  @Field(() => ID)
  @IsUUID()
  id!: string;
}

@RequiresScopes('account:write')
@ObjectType({ description: 'A new API key: `key` is shown in this answer only.' })
class CreatedApiKey {
  @Field(() => ID)
  id!: string;

  @Field({ description: '`fvk_…`: send it as `Authorization: Bearer <key>`.' })
  key!: string;
}

@ObjectType({ description: 'The short-lived access token an API key stands for (the edge asks for it).' })
class ApiKeyToken {
  @Field()
  accessToken!: string;

  @Field(() => Int)
  expiresIn!: number;
}

@ObjectType({ description: 'A page of API keys, oldest first.' })
class ApiKeyPage extends PageOf(ApiKey) {}

/** Keys are managed by a person's login: a key's own token may not make or revoke keys. */
async function notByKey(keys: ApiKeys, ctx: SubgraphContext): Promise<void> {
  if (await keys.liveKey(ctx.principal!))
    throw new AppError('forbidden', 'An API key cannot manage API keys (account:write).');
}

/** admin:integrations, as the caller holds it now (the token's scopes, or a newer change). */
function administersIntegrations(ctx: SubgraphContext): void {
  if (!ctx.scopes?.has('admin:integrations')) throw new AppError('forbidden', 'Needs admin:integrations.');
}

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  constructor(private readonly keys: ApiKeys) {}

  @RequiresScopes('account:write')
  @Mutation(() => CreatedApiKey, { description: 'A new API key; the key itself is in this answer only.' })
  async createApiKey(@Args() args: CreateApiKeyArgs, @Ctx() ctx: SubgraphContext): Promise<CreatedApiKey> {
    await notByKey(this.keys, ctx);
    const { apiKey, key } = await this.keys.create(ctx.principal!, args.name, args.scopes, args.expiresInDays);
    return { id: apiKey.id, key };
  }

  @RequiresScopes('account:write')
  @Query(() => ApiKeyPage, { description: 'Your API keys (not revoked), oldest first; never the keys themselves.' })
  apiKeys(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<ApiKey>> {
    return this.keys.list(ctx.principal!.userId, first, after);
  }

  @RequiresScopes('account:write')
  @Mutation(() => ApiKey, {
    description: 'Revoke one of your API keys: refused everywhere within the revocation bound.',
  })
  async revokeApiKey(@Args() { id }: ApiKeyIdArgs, @Ctx() ctx: SubgraphContext): Promise<ApiKey> {
    await notByKey(this.keys, ctx);
    return this.keys.revoke(ctx.principal!, id, false);
  }

  @RequiresScopes('admin:integrations')
  @Query(() => ApiKeyPage, { description: "Every user's API keys (not revoked), oldest first (admin:integrations)." })
  allApiKeys(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<ApiKey>> {
    administersIntegrations(ctx);
    return this.keys.list(undefined, first, after);
  }

  @RequiresScopes('admin:integrations')
  @Mutation(() => ApiKey, { description: "Revoke any user's API key (admin:integrations)." })
  adminRevokeApiKey(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<ApiKey> {
    administersIntegrations(ctx);
    return this.keys.revoke(ctx.principal!, id, true);
  }

  @Mutation(() => ApiKeyToken, {
    description:
      "The edge's exchange of an API key for a short-lived access token (the gateway does it for `Authorization: Bearer fvk_…`). " +
      'A key that does not answer counts against the client address (429 past API_KEY_MAX_FAILURES_PER_CLIENT).',
  })
  exchangeApiKey(@Args() { key }: ExchangeApiKeyArgs, @Ctx() ctx: SubgraphContext): Promise<ApiKeyToken> {
    return this.keys.exchange(key, ctx.clientIp);
  }
}
