import { IsBoolean, IsIn, IsOptional, MaxLength } from 'class-validator';
import {
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  ID,
  Int,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import { IdArgs, VersionedIdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { TrashEmptying, TrashEntry, TrashPage } from '../../../lib/kit/trash';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { UserReference } from '../../../lib/user-reference';
import { Note, NoteSummary } from '../entities/note';
import { MAX_TAGS } from '../markdown';
import type { NoteJobs } from '../note-jobs';
import { ArchivedFilter, MAX_BODY_CHARACTERS, NoteService } from '../note-service';
import { MAX_QUERY_LENGTH } from '../search';

// Lengths past these are refused before the service looks (it checks the exact rules).
const MAX_ARG_BODY = MAX_BODY_CHARACTERS * 2;

@ArgsType()
class CreateNoteArgs {
  @Field(() => String, { nullable: true, description: "0 to 200 characters, trimmed; empty: the body's first line." })
  @IsOptional()
  @MaxLength(1000)
  title?: string | null;

  @Field({ description: 'Markdown, at most 100,000 characters.' })
  @MaxLength(MAX_ARG_BODY)
  body!: string;

  @Field(() => ID, { nullable: true, description: 'One of your folders; null: none.' })
  @IsOptional()
  folderId?: string | null;

  @Field(() => [String], { nullable: true, description: 'Tags besides the #hashtags of the body.' })
  @IsOptional()
  @MaxLength(200, { each: true })
  tags?: string[] | null;

  @Field(() => Boolean, { nullable: true })
  @IsOptional()
  pinned?: boolean | null;
}

@ArgsType()
class UpdateNoteArgs {
  @Field(() => String, { nullable: true, description: "Left out: unchanged; empty or null: the body's first line." })
  @IsOptional()
  @MaxLength(1000)
  title?: string | null;

  @Field(() => String, { nullable: true, description: 'Left out: unchanged.' })
  @IsOptional()
  @MaxLength(MAX_ARG_BODY)
  body?: string | null;

  @Field(() => ID, { nullable: true, description: 'Left out: unchanged; null: out of its folder.' })
  @IsOptional()
  folderId?: string | null;

  @Field(() => [String], { nullable: true, description: 'The given tags, replaced; the #hashtags of the body stay.' })
  @IsOptional()
  @MaxLength(200, { each: true })
  tags?: string[] | null;

  @Field(() => Boolean, { nullable: true, description: 'Left out: unchanged.' })
  @IsOptional()
  pinned?: boolean | null;
}

@ArgsType()
class NoteFilterArgs {
  @Field(() => ID, { nullable: true, description: 'Only the notes in this folder.' })
  @IsOptional()
  folderId?: string | null;

  @Field(() => String, { nullable: true, description: 'Only notes with this tag or a tag nested in it.' })
  @IsOptional()
  @MaxLength(200)
  tag?: string | null;

  @Field(() => String, { defaultValue: 'false', description: '`false` (default), `true` or `all`.' })
  @IsIn(['false', 'true', 'all'])
  archived!: ArchivedFilter;

  @Field(() => Boolean, { nullable: true, description: 'Only pinned (true) or unpinned (false) notes.' })
  @IsOptional()
  pinned?: boolean | null;

  @Field(() => String, {
    nullable: true,
    description:
      'Full-text search over title and body: every word must match (as a word or its start); "quoted" text as a phrase. Best match first.',
  })
  @IsOptional()
  @MaxLength(MAX_QUERY_LENGTH)
  q?: string | null;
}

@ArgsType()
class RenameTagArgs {
  @Field({ description: 'The tag to rename (its nested tags follow).' })
  @MaxLength(200)
  from!: string;

  @Field({ description: 'Its new name.' })
  @MaxLength(200)
  to!: string;
}

@ObjectType({
  description: "A page of the caller's notes: pinned first, then the newest change (with q: best match first).",
})
class NoteSummaryPage extends PageOf(NoteSummary) {}

@RequiresScopes('notes:read')
@ObjectType({ description: 'A tag and how many of your notes carry it.' })
class NoteTagCount {
  @Field() tag!: string;
  @Field(() => Int) count!: number;
}

@RequiresScopes('notes:read')
@ObjectType({ description: 'A tag rename, accepted: it runs in the background.' })
class TagRenameAccepted {
  @Field(() => ID, { description: 'The background job.' }) id!: string;
  @Field() from!: string;
  @Field() to!: string;
}

@ArgsType()
class DeleteNoteArgs extends VersionedIdArgs {
  @Field(() => Boolean, {
    defaultValue: false,
    description: 'true: deleted at once; false (default): to the trash for TRASH_RETENTION_DAYS.',
  })
  @IsBoolean()
  permanent!: boolean;
}

@Resolver(() => Note)
export class NoteResolver {
  constructor(
    private readonly service: NoteService,
    private readonly jobs: NoteJobs,
    private readonly emptyTrash: (ownerId: string) => Promise<TrashEmptying>,
  ) {}

  @RequiresScopes('notes:write')
  @Mutation(() => Note, { description: 'Create a note (version 1). Past NOTES_PER_USER: conflict with details.limit.' })
  createNote(@Args() fields: CreateNoteArgs, @Ctx() ctx: SubgraphContext): Promise<Note> {
    return this.service.create(ctx.principal!.userId, fields);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => Note, {
    description: 'Change the note at the given version; `conflict` (with currentVersion) when it has another.',
  })
  updateNote(
    @Args() { id, version }: VersionedIdArgs,
    @Args() changes: UpdateNoteArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Note> {
    return this.service.update(ctx.principal!.userId, id, version, changes);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => Note, { description: 'Archive the note at the given version: it leaves the default listing.' })
  archiveNote(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<Note> {
    return this.service.setArchived(ctx.principal!.userId, id, version, true);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => Note, { description: 'Bring an archived note back, at the given version.' })
  unarchiveNote(@Args() { id, version }: VersionedIdArgs, @Ctx() ctx: SubgraphContext): Promise<Note> {
    return this.service.setArchived(ctx.principal!.userId, id, version, false);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => Note, {
    description:
      'Delete the note at the given version (to the trash unless permanent); `conflict` (with currentVersion) when it has another.',
  })
  deleteNote(@Args() { id, version, permanent }: DeleteNoteArgs, @Ctx() ctx: SubgraphContext): Promise<Note> {
    return this.service.delete(ctx.principal!.userId, id, version, permanent);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => Note, {
    description: 'Bring a note back from the trash: its tags, folder (the top when it went), links and backlinks.',
  })
  restoreNote(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Note> {
    return this.service.restore(ctx.principal!.userId, id);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => TrashEntry, { description: 'Delete a note in the trash for good (note.deleted).' })
  async purgeNote(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<TrashEntry> {
    const note = await this.service.purge(ctx.principal!.userId, id);
    return { type: 'note', id: note.id, title: note.title, deletedAt: note.deletedAt!, purgeAt: new Date() };
  }

  @RequiresScopes('notes:write')
  @Mutation(() => TrashEmptying, {
    description: 'Purge every note in your trash, in the background (past JOBS_PENDING_PER_USER: rate_limit_exceeded).',
  })
  emptyNoteTrash(@Ctx() ctx: SubgraphContext): Promise<TrashEmptying> {
    return this.emptyTrash(ctx.principal!.userId);
  }

  @RequiresScopes('notes:read')
  @Query(() => TrashPage, { description: 'Your notes in the trash, the last trashed first (a part of GET /trash).' })
  trashedNotes(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<TrashEntry>> {
    return this.service.trashed(ctx.principal!.userId, first, after);
  }

  @RequiresScopes('notes:write')
  @Mutation(() => TagRenameAccepted, {
    description:
      'Rename a tag and its nested tags in every note of yours, #hashtags in bodies included: in the background, each changed note gets a new version and a note.updated event. Past JOBS_PENDING_PER_USER jobs of yours waiting: rate_limit_exceeded.',
  })
  async renameNoteTag(@Args() { from, to }: RenameTagArgs, @Ctx() ctx: SubgraphContext): Promise<TagRenameAccepted> {
    return this.jobs.requestTagRename(ctx.principal!.userId, from, to);
  }

  @RequiresScopes('notes:read')
  @Query(() => Note, { description: "One of the caller's notes." })
  note(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<Note> {
    return this.service.get(ctx.principal!.userId, id);
  }

  @RequiresScopes('notes:read')
  @Query(() => NoteSummaryPage, { description: "The caller's notes, a page at a time, with excerpts." })
  notes(
    @Args() { first, after }: PageArgs,
    @Args() filter: NoteFilterArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<NoteSummary>> {
    return this.service.list(ctx.principal!.userId, { ...filter }, first, after);
  }

  @RequiresScopes('notes:read')
  @Query(() => NoteSummaryPage, {
    description: 'The notes of the caller that link to this one with [[its title]] or [[its id]], oldest first.',
  })
  noteBacklinks(
    @Args() { id }: IdArgs,
    @Args() { first, after }: PageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<NoteSummary>> {
    return this.service.backlinks(ctx.principal!.userId, id, first, after);
  }

  @RequiresScopes('notes:read')
  @Query(() => [NoteTagCount], {
    description: `Every tag of the caller's notes with its count (a note has at most ${MAX_TAGS}).`,
  })
  noteTags(@Ctx() ctx: SubgraphContext): Promise<NoteTagCount[]> {
    return this.service.tags(ctx.principal!.userId);
  }

  @RequiresScopes('notes:read')
  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() note: Note): UserReference {
    return { id: note.ownerId };
  }
}

@Resolver(() => NoteSummary)
export class NoteSummaryResolver {
  @RequiresScopes('notes:read')
  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() note: NoteSummary): UserReference {
    return { id: note.ownerId };
  }
}
