import { IsOptional, MaxLength } from 'class-validator';
import { Args, ArgsType, Ctx, Field, ID, Mutation, Query, Resolver } from 'type-graphql';
import { VersionedIdArgs } from '../../../lib/arguments';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { NoteFolder } from '../entities/note-folder';
import { FolderService } from '../folder-service';

@ArgsType()
class CreateFolderArgs {
  @Field({ description: '1 to 100 characters without "/", unique among its siblings.' })
  @MaxLength(400)
  name!: string;

  @Field(() => ID, { nullable: true, description: 'The folder to put it in; null: at the top.' })
  @IsOptional()
  parentId?: string | null;
}

@ArgsType()
class UpdateFolderArgs {
  @Field(() => String, { nullable: true, description: 'Left out: unchanged.' })
  @IsOptional()
  @MaxLength(400)
  name?: string | null;

  @Field(() => ID, { nullable: true, description: 'Left out: unchanged; null: to the top. Not into itself or below.' })
  @IsOptional()
  parentId?: string | null;
}

@Resolver(() => NoteFolder)
export class FolderResolver {
  constructor(private readonly service: FolderService) {}

  @RequiresScopes('notes:read')
  @Query(() => [NoteFolder], { description: 'Every folder of the caller, by path, each with its note count.' })
  noteFolders(@Ctx() ctx: SubgraphContext): Promise<NoteFolder[]> {
    return this.service.list(ctx.principal!.userId);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => NoteFolder, { description: 'Create a folder (at most 10 deep; NOTE_FOLDERS_PER_USER of them).' })
  createNoteFolder(@Args() args: CreateFolderArgs, @Ctx() ctx: SubgraphContext): Promise<NoteFolder> {
    return this.service.create(ctx.principal!.userId, args);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => NoteFolder, {
    description:
      'Rename or move a folder at the given version. Into itself or below it: conflict, details.reason "cycle".',
  })
  updateNoteFolder(
    @Args() { id, version }: VersionedIdArgs,
    @Args() changes: UpdateFolderArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<NoteFolder> {
    return this.service.update(ctx.principal!.userId, id, version, changes);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => NoteFolder, {
    description:
      'Delete an empty folder at the given version; one that is not: conflict with noteCount and folderCount.',
  })
  deleteNoteFolder(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<NoteFolder> {
    return this.service.delete(ctx.principal!.userId, id, version);
  }
}
