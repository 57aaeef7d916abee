import { IsOptional, MaxLength, MinLength } from 'class-validator';
import { Args, ArgsType, Ctx, Field, FieldResolver, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { IdArgs, VersionedIdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { TrimmedLength } from '../../../lib/validators';
import type { SpeechEngine } from '../engine/speech-engine';
import { UserReference } from '../../../lib/user-reference';
import { Voice } from '../entities/voice';
import { VoiceChanges, VoiceService } from '../voice-service';
import { VoiceTuningArgs } from './voice-args';

@ArgsType()
class CreateVoiceArgs extends VoiceTuningArgs {
  @Field()
  @TrimmedLength(1, 100)
  name!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(1000)
  description?: string | null;

  @Field()
  @MinLength(1)
  @MaxLength(64)
  baseVoice!: string;
}

@ArgsType()
class UpdateVoiceArgs extends VoiceTuningArgs {
  @Field(() => String, { nullable: true, description: 'Left out: unchanged.' })
  @IsOptional()
  @TrimmedLength(1, 100)
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'Left out: unchanged; null: cleared.' })
  @IsOptional()
  @MaxLength(1000)
  description?: string | null;

  @Field(() => String, { nullable: true, description: 'Left out: unchanged.' })
  @IsOptional()
  @MinLength(1)
  @MaxLength(64)
  baseVoice?: string | null;
}

@ObjectType({ description: "A page of the caller's voices, oldest first." })
class VoicePage extends PageOf(Voice) {}

@ObjectType({ description: 'A voice of the speech engine that voices are based on.' })
class BaseVoice {
  @Field({ description: 'What base_voice and voice_blend name.' }) name!: string;
  @Field() displayName!: string;
  @Field(() => String, { nullable: true }) gender!: string | null;
  @Field(() => [String]) languages!: string[];
  @Field() description!: string;
}

@Resolver(() => Voice)
export class VoiceResolver {
  constructor(
    private readonly service: VoiceService,
    private readonly engine: SpeechEngine,
  ) {}

  @RequiresScopes('tts:write')
  @Mutation(() => Voice, { description: 'Create a voice; `conflict` when you have one of that name already.' })
  createVoice(@Args() args: CreateVoiceArgs, @Ctx() ctx: SubgraphContext): Promise<Voice> {
    return this.service.create(ctx.principal!.userId, args);
  }

  @RequiresScopes('tts:write')
  @Mutation(() => Voice, {
    description:
      'Change a voice at the given version (any of its fields; a left-out argument stays, a null voiceBlend or description is cleared); ' +
      'its version goes up by 1. `conflict` (with currentVersion) when it has another version, or when the new name is taken.',
  })
  updateVoice(
    @Args() { id, version }: VersionedIdArgs,
    @Args() changes: UpdateVoiceArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Voice> {
    // type-graphql leaves arguments that were not given undefined; null is an explicit clear.
    return this.service.update(ctx.principal!.userId, id, version, changes as VoiceChanges);
  }

  @RequiresScopes('tts:write')
  @Mutation(() => Voice, {
    description: 'Delete a voice at the given version; `conflict` (with currentVersion) when it has another.',
  })
  deleteVoice(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<Voice> {
    return this.service.delete(ctx.principal!.userId, id, version);
  }

  @RequiresScopes('tts:read')
  @Query(() => Voice, { description: 'One of your voices.' })
  voice(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Voice> {
    return this.service.get(ctx.principal!.userId, id);
  }

  @RequiresScopes('tts:read')
  @Query(() => VoicePage, { description: 'Your voices, oldest first, a page at a time.' })
  voices(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<Voice>> {
    return this.service.list(ctx.principal!.userId, first, after);
  }

  // Public: the catalogue (public: the tts module definition, module.ts).
  @Query(() => [BaseVoice], { description: 'The base voices of the speech engine.' })
  baseVoices(): Promise<BaseVoice[]> {
    return this.engine.baseVoices();
  }

  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() voice: Voice): UserReference {
    return { id: voice.ownerId };
  }
}
