import { IsBoolean, IsInt, IsOptional, IsUUID, Max, MaxLength, Min, MinLength } from 'class-validator';
import {
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  Float,
  ID,
  Int,
  Mutation,
  ObjectType,
  Query,
  registerEnumType,
  Resolver,
  Root,
} from 'type-graphql';
import { IdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { AppError } from '../../../lib/errors';
import { OperationBudget } from '../../../lib/operation-budget';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { Synthesis, SynthesisState } from '../entities/synthesis';
import { UserReference } from '../../../lib/user-reference';
import { MAX_AUDIO_READ_BYTES, MAX_TEXT_CHARACTERS, SynthesisAudio, SynthesisService } from '../synthesis-service';
import { AudioFormat, isEncoded } from '../audio/encoders';
import { wordTimings } from '../synthesis-timings';

/** The formats audio is served in (OpenAI's response_format names, upper-case). */
export enum SpeechFormat {
  MP3 = 'mp3',
  OPUS = 'opus',
  FLAC = 'flac',
  WAV = 'wav',
  PCM = 'pcm',
}
registerEnumType(SpeechFormat, {
  name: 'SpeechFormat',
  description:
    'MP3 (LAME, 64 kbit/s mono), OPUS (Ogg Opus, 48 kHz, 32 kbit/s), FLAC, WAV (mono 16-bit PCM) or PCM (the samples, 16-bit little-endian, without a header).',
});

@RequiresScopes('tts:synthesize')
@ObjectType({
  description: 'One spoken word: when (ms of the audio) and where in the text (code points, 0-based, end exclusive).',
})
class WordTiming {
  @Field() word!: string;
  @Field(() => Int) startMs!: number;
  @Field(() => Int, { description: "The next word's start, or the end of the audio." }) endMs!: number;
  @Field(() => Int) charStart!: number;
  @Field(() => Int) charEnd!: number;
}

@ArgsType()
class FormatArgs {
  @Field(() => SpeechFormat, { defaultValue: SpeechFormat.WAV })
  format!: SpeechFormat;
}

@ArgsType()
class StreamFormatArgs {
  @Field(() => SpeechFormat, {
    nullable: true,
    description:
      'MP3, OPUS or FLAC: the encoding instead of the WAV (made while it renders when asked for with synthesizeSpeech, else once it has succeeded).',
  })
  @IsOptional()
  format?: SpeechFormat | null;
}
import { VoiceTuningArgs } from './voice-args';

@ArgsType()
class SynthesizeArgs extends VoiceTuningArgs {
  @Field({ description: `What to say: 1 to ${MAX_TEXT_CHARACTERS} characters, not only white space.` })
  text!: string;

  @Field(() => ID, {
    nullable: true,
    description: 'One of your voices; or give baseVoice (and voiceBlend, language, speed) instead.',
  })
  @IsOptional()
  @IsUUID()
  voiceId?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MinLength(1)
  @MaxLength(64)
  baseVoice?: string | null;
}

@ArgsType()
class AudioChunkArgs {
  @Field(() => Int, { description: 'First byte, from 0.' })
  @IsInt()
  @Min(0)
  offset!: number;

  @Field(() => Int, { description: `Bytes wanted, 1 to ${MAX_AUDIO_READ_BYTES}; fewer come back at the end.` })
  @IsInt()
  @Min(1)
  @Max(MAX_AUDIO_READ_BYTES)
  length!: number;
}

@ArgsType()
class CancelArgs extends IdArgs {
  @Field(() => Boolean, {
    defaultValue: false,
    description:
      'Only cancel: a synthesis that has already finished is left as it is (outcome UNCHANGED), not deleted.',
  })
  @IsBoolean()
  keepFinished!: boolean;
}

@RequiresScopes('tts:synthesize')
@ObjectType({ description: "A piece of a synthesis's WAV (or of its encoding) as far as it is made." })
class SynthesisStreamPiece {
  @Field(() => SynthesisState) state!: SynthesisState;
  @Field(() => String, { nullable: true, description: 'Why it failed.' }) error!: string | null;
  @Field({
    description:
      'Base64 of up to `length` bytes of the WAV (or of the encoding in `format`) from `offset`: fewer (or none) when no more are ' +
      "made yet. While the synthesis runs the WAV header's two sizes are 0xFFFFFFFF (length unknown); every byte after the " +
      '44-byte header is final. A streamed FLAC says "length unknown" too; every other byte is final.',
  })
  chunk!: string;
  @Field({
    description:
      'The piece reaches the end of the finished audio: nothing more will come (also true once it failed or was canceled).',
  })
  end!: boolean;
}

@ArgsType()
class SpeechArgs {
  @Field({ description: `What to say: 1 to ${MAX_TEXT_CHARACTERS} characters, not only white space.` })
  text!: string;

  @Field({ description: 'One of your voice ids, a base voice name, or a blend expression such as f3(2)+m3.' })
  @MinLength(1)
  @MaxLength(500)
  voice!: string;

  @Field(() => Float, {
    nullable: true,
    description: "0.25 to 4.0; a stored voice's own speed when left out, else 1.0.",
  })
  @IsOptional()
  @Min(0.25)
  @Max(4)
  speed?: number | null;

  @Field(() => SpeechFormat, {
    nullable: true,
    description: 'What the answer will be read as: MP3, OPUS and FLAC are encoded while it renders, beside the WAV.',
  })
  @IsOptional()
  format?: SpeechFormat | null;
}

@ArgsType()
class SynthesesArgs extends PageArgs {
  @Field(() => SynthesisState, { nullable: true, description: 'Only syntheses in this state.' })
  @IsOptional()
  state?: SynthesisState | null;
}

@ObjectType({ description: "A page of the caller's syntheses, newest first." })
class SynthesisPage extends PageOf(Synthesis) {}

@RequiresScopes('tts:synthesize')
@ObjectType('SynthesisAudio', {
  description: 'The rendered speech: a WAV file (mono, 16-bit PCM), or its samples or an encoding of it.',
})
class SynthesisAudioType implements SynthesisAudio {
  synthesisId!: string;
  key!: string;
  skip!: number;
  @Field(() => SpeechFormat) format!: AudioFormat;
  @Field() contentType!: string;
  @Field(() => Int, {
    nullable: true,
    description:
      'Its size; null while the encoding is being made by this first request for the format: read it with synthesisStream(format).',
  })
  bytes!: number | null;
  @Field({ description: 'An entity tag of the audio, which never changes once rendered.' })
  etag!: string;
}

enum CancelOutcome {
  CANCELED = 'CANCELED',
  DELETED = 'DELETED',
  UNCHANGED = 'UNCHANGED',
}
registerEnumType(CancelOutcome, {
  name: 'CancelSynthesisOutcome',
  description:
    'CANCELED: it was queued or running; DELETED: it had finished, and is gone with its audio; UNCHANGED: it had finished and keepFinished was set.',
});

@RequiresScopes('tts:synthesize')
@ObjectType({ description: 'What cancelSynthesis did.' })
class CancelSynthesisResult {
  @Field(() => ID) id!: string;
  @Field(() => CancelOutcome) outcome!: CancelOutcome;
  @Field(() => Synthesis, { description: 'As the cancel left it (CANCELED), or as it was when deleted.' })
  synthesis!: Synthesis;
}

const withEtag = (audio: SynthesisAudio): SynthesisAudioType => ({
  ...audio,
  etag: audio.format === 'wav' ? `"${audio.synthesisId}"` : `"${audio.synthesisId}.${audio.format}"`,
});

@Resolver(() => Synthesis)
export class SynthesisResolver {
  constructor(private readonly service: SynthesisService) {}

  @RequiresScopes('tts:synthesize')
  @Mutation(() => Synthesis, {
    description: 'Queue text to be spoken with one of your voices or inline settings; it starts as QUEUED.',
  })
  synthesize(@Args() { text, voiceId, ...settings }: SynthesizeArgs, @Ctx() ctx: SubgraphContext): Promise<Synthesis> {
    return this.service.request(ctx.principal!.userId, { text, voiceId, ...settings });
  }

  @RequiresScopes('tts:synthesize')
  @Mutation(() => Synthesis, {
    description:
      'Queue text to be spoken, the OpenAI way: `voice` names one of your voices, a base voice or a blend. What ' +
      'POST /v1/audio/speech runs before it streams the audio.',
  })
  synthesizeSpeech(
    @Args() { text, voice, speed, format }: SpeechArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Synthesis> {
    return this.service.requestSpeech(ctx.principal!.userId, { text, voice, speed, format });
  }

  @RequiresScopes('tts:synthesize')
  @Mutation(() => CancelSynthesisResult, {
    description:
      'Cancel one of your syntheses while it is QUEUED or RUNNING (its worker stops; it becomes CANCELED, with no audio), ' +
      'or delete a finished one (SUCCEEDED, FAILED, CANCELED) with its audio.',
  })
  async cancelSynthesis(
    @Args() { id, keepFinished }: CancelArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<CancelSynthesisResult> {
    const { outcome, synthesis } = await this.service.cancel(ctx.principal!.userId, id, keepFinished);
    return {
      id,
      outcome: { canceled: CancelOutcome.CANCELED, deleted: CancelOutcome.DELETED, unchanged: CancelOutcome.UNCHANGED }[
        outcome
      ],
      synthesis,
    };
  }

  @RequiresScopes('tts:synthesize')
  @Query(() => Synthesis, { description: 'One of your syntheses.' })
  synthesis(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Synthesis> {
    return this.service.get(ctx.principal!.userId, id);
  }

  @RequiresScopes('tts:synthesize')
  @Query(() => SynthesisPage, {
    description: 'Your syntheses, newest first, a page at a time; only those in `state` when given.',
  })
  syntheses(@Args() { first, after, state }: SynthesesArgs, @Ctx() ctx: SubgraphContext): Promise<Page<Synthesis>> {
    return this.service.list(ctx.principal!.userId, first, after, state);
  }

  @RequiresScopes('tts:synthesize')
  @Query(() => SynthesisAudioType, {
    description: 'The audio of one of your syntheses; `conflict` (with its state) while it has none.',
  })
  async synthesisAudio(
    @Args() { id }: IdArgs,
    @Args() { format }: FormatArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SynthesisAudioType> {
    return withEtag(await this.service.audio(ctx.principal!.userId, id, format));
  }

  @RequiresScopes('tts:synthesize')
  @Query(() => [WordTiming], {
    description:
      "When each word of one of your syntheses is spoken, from the engine's own word events; `conflict` until it has succeeded.",
  })
  synthesisTimings(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<WordTiming[]> {
    return this.service.timings(ctx.principal!.userId, id);
  }

  @RequiresScopes('tts:synthesize')
  @Query(() => String, {
    description: 'The word timings as WebVTT captions, one cue per sentence; `conflict` until it has succeeded.',
  })
  synthesisCaptions(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<string> {
    return this.service.captions(ctx.principal!.userId, id);
  }

  @FieldResolver(() => [WordTiming], {
    nullable: true,
    description: "When each word is spoken (from the engine's word events); null until it has succeeded.",
  })
  timings(@Root() synthesis: Synthesis): WordTiming[] | null {
    if (synthesis.state !== SynthesisState.SUCCEEDED) return null;
    return synthesis.timings ? wordTimings(synthesis.text, synthesis.timings) : [];
  }

  @FieldResolver(() => SynthesisAudioType, { nullable: true, description: 'Null until it has succeeded.' })
  audio(@Root() synthesis: Synthesis): SynthesisAudioType | null {
    const audio = this.service.audioOf(synthesis);
    return audio && withEtag(audio);
  }

  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() synthesis: Synthesis): UserReference {
    return { id: synthesis.ownerId };
  }
}

@Resolver(() => SynthesisAudioType)
export class SynthesisAudioResolver {
  /** Audio bytes each operation has asked for so far, over all its `chunk` aliases and all its subgraph requests. */
  private readonly budget: OperationBudget;

  constructor(
    private readonly service: SynthesisService,
    /** GRAPHQL_MAX_AUDIO_BYTES: 200 aliases of a 1 MiB chunk once made a 280 MB answer. */
    private readonly maxBytesPerOperation: number,
  ) {
    this.budget = new OperationBudget(maxBytesPerOperation);
  }

  /** Reserved before anything is read: resolvers of all aliases start before any read ends. */
  private reserve(ctx: SubgraphContext, wanted: number): void {
    if (!this.budget.take(ctx, wanted)) {
      throw new AppError(
        'validation_error',
        `One operation may read at most ${this.maxBytesPerOperation} bytes of audio (GRAPHQL_MAX_AUDIO_BYTES); fetch the rest in further operations.`,
        {
          length: [`would exceed ${this.maxBytesPerOperation} bytes of audio in this operation`],
        },
      );
    }
  }

  @FieldResolver(() => String, {
    description:
      'Base64 of `length` bytes from `offset`: how clients fetch the audio (a byte range at a time). ' +
      'One operation may read at most GRAPHQL_MAX_AUDIO_BYTES (4 MiB) over all its chunks.',
  })
  async chunk(
    @Root() audio: SynthesisAudioType,
    @Args() { offset, length }: AudioChunkArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<string> {
    this.reserve(ctx, Math.max(0, Math.min(length, (audio.bytes ?? 0) - offset)));
    return (await this.service.readAudio(audio, offset, length)).toString('base64');
  }

  @RequiresScopes('tts:synthesize')
  @Query(() => SynthesisStreamPiece, {
    description:
      'The audio of one of your syntheses while it renders: what POST /v1/audio/speech streams. Ask from offset 0, then from ' +
      'where the last piece ended, until `end`; an empty piece means "not rendered that far yet, ask again". Counts against ' +
      'GRAPHQL_MAX_AUDIO_BYTES like `chunk`.',
  })
  async synthesisStream(
    @Args() { id }: IdArgs,
    @Args() { offset, length }: AudioChunkArgs,
    @Args() { format }: StreamFormatArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SynthesisStreamPiece> {
    this.reserve(ctx, length);
    const encoded = format && isEncoded(format) ? format : undefined;
    const { state, error, bytes, end } = await this.service.stream(ctx.principal!.userId, id, offset, length, encoded);
    return { state, error, chunk: bytes.toString('base64'), end };
  }
}
