// The paging arguments every list field takes (voices, syntheses, sessions, users): one class,
// so that the page size bound and the cursor's length are the same everywhere.
import { IsOptional, Max, MaxLength, Min } from 'class-validator';
import { ArgsType, Field, Int } from 'type-graphql';

export const MAX_PAGE_SIZE = 100;

@ArgsType()
export class PageArgs {
  @Field(() => Int, { defaultValue: 20, description: `Page size, 1 to ${MAX_PAGE_SIZE}.` })
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  first!: number;

  @Field(() => String, { nullable: true, description: 'nextCursor of the previous page.' })
  @IsOptional()
  @MaxLength(200)
  after?: string | null;
}
