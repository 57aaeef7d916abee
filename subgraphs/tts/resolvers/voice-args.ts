// Arguments shared by the voice and synthesis operations.
import { IsOptional, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ArgsType, Field, Float } from 'type-graphql';

/** How a voice speaks, beyond its base voice. */
@ArgsType()
export class VoiceTuningArgs {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @MinLength(1)
  @MaxLength(500)
  voiceBlend?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MinLength(1)
  @MaxLength(35)
  language?: string | null;

  @Field(() => Float, { nullable: true })
  @IsOptional()
  @Min(0.25)
  @Max(4)
  speed?: number | null;
}
