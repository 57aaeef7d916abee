// The arguments every module's operations take the same way: an id, and an id at the version
// the caller expects (optimistic locking: another version is `conflict` with currentVersion).
import { IsInt, IsUUID, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from 'type-graphql';

@ArgsType()
export class IdArgs {
  @Field(() => ID)
  @IsUUID()
  id!: string;
}

@ArgsType()
export class VersionedIdArgs extends IdArgs {
  @Field(() => Int, {
    description: 'The version the caller expects it to have; another is `conflict` with currentVersion.',
  })
  @IsInt()
  @Min(1)
  version!: number;
}
