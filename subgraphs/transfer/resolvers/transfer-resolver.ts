import { ArrayMaxSize, IsBase64, IsIn, IsInt, IsOptional, IsUUID, Max, MaxLength, Min } from 'class-validator';
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
  Resolver,
  Root,
} from 'type-graphql';
import { IdArgs } from '../../../lib/arguments';
import { Page, PageArgs, PageOf } from '../../../lib/paging';
import { RequiresScopes } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import { TransferJob, TransferProgress } from '../entities/transfer-job';
import { IMPORT_FORMATS } from '../transfer-rules';
import { DEFAULT_EXPORT_PARTS, EXPORT_PARTS } from '../export-runner';
import { MAX_EXPORT_CHUNK, MAX_PIECE_BYTES, TransferService } from '../transfer-service';

@ArgsType()
class BeginImportArgs {
  @Field({ description: `The file's format: ${IMPORT_FORMATS.join(', ')}.` })
  @IsIn([...IMPORT_FORMATS], { message: `format must be one of ${IMPORT_FORMATS.join(', ')}` })
  format!: string;

  @Field(() => ID, { nullable: true, description: 'The note folder imported notes go under (markdown).' })
  @IsOptional()
  @IsUUID()
  targetFolderId?: string | null;
}

@ArgsType()
class AppendArgs {
  @Field(() => ID)
  @IsUUID()
  id!: string;

  @Field(() => Float, { description: 'Where the piece starts: the bytes received so far.' })
  @Min(0)
  @Max(2 ** 53)
  offset!: number;

  @Field({ description: `The piece's bytes, base64 (at most ${MAX_PIECE_BYTES} bytes decoded).` })
  @IsBase64()
  @MaxLength(Math.ceil(MAX_PIECE_BYTES / 3) * 4)
  chunk!: string;
}

@ArgsType()
class ExportArgs {
  @Field(() => [String], {
    nullable: true,
    description: `What to export, of ${EXPORT_PARTS.join(', ')}; default: all but audio.`,
  })
  @IsOptional()
  @ArrayMaxSize(EXPORT_PARTS.length * 2)
  @IsIn([...EXPORT_PARTS], { each: true, message: `include must name ${EXPORT_PARTS.join(', ')}` })
  include?: string[] | null;
}

@ArgsType()
class ChunkArgs {
  @Field(() => Int)
  @IsInt()
  @Min(0)
  offset!: number;

  @Field(() => Int)
  @IsInt()
  @Min(1)
  @Max(MAX_EXPORT_CHUNK)
  length!: number;
}

@RequiresScopes('transfer:read')
@ObjectType({ description: "An export's zip: its size and ETag, read in chunks." })
class ExportFile {
  @Field(() => ID) id!: string;
  @Field(() => Float) bytes!: number;
  @Field() etag!: string;
  @Field() contentType!: string;
  @Field() fileName!: string;
}

@ObjectType({ description: "A page of the caller's imports, newest first." })
class ImportPage extends PageOf(TransferJob) {}

@Resolver(() => TransferJob)
export class TransferResolver {
  constructor(private readonly service: TransferService) {}

  @RequiresScopes('transfer:write')
  @Mutation(() => TransferJob, {
    description:
      'Starts an import waiting for its file: send it with appendImportBytes, a piece at a time, then finishImportUpload (the REST route `POST /imports` does all three with the raw body).',
  })
  beginImport(@Args() { format, targetFolderId }: BeginImportArgs, @Ctx() ctx: SubgraphContext): Promise<TransferJob> {
    return this.service.beginImport(ctx.principal!, format, targetFolderId);
  }

  @RequiresScopes('transfer:write')
  @Mutation(() => Float, {
    description:
      'One piece of the file at `offset`; answers the bytes received so far. Past IMPORT_MAX_BYTES: payload_too_large, and the import is gone.',
  })
  appendImportBytes(@Args() { id, offset, chunk }: AppendArgs, @Ctx() ctx: SubgraphContext): Promise<number> {
    return this.service.appendUpload(ctx.principal!.userId, id, offset, Buffer.from(chunk, 'base64'));
  }

  @RequiresScopes('transfer:write')
  @Mutation(() => TransferJob, { description: 'The whole file is in: the import is queued.' })
  finishImportUpload(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<TransferJob> {
    return this.service.finishUpload(ctx.principal!.userId, id);
  }

  @RequiresScopes('transfer:write')
  @Mutation(() => Boolean, { description: 'Gives up an upload not yet finished: its pieces and the import go.' })
  abortImportUpload(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<boolean> {
    return this.service.abortUpload(ctx.principal!.userId, id);
  }

  @RequiresScopes('transfer:write')
  @Mutation(() => TransferJob, { description: 'Cancels an import; what was already imported stays.' })
  cancelImport(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<TransferJob> {
    return this.service.cancel(ctx.principal!.userId, id);
  }

  @RequiresScopes('transfer:read')
  @Query(() => TransferJob, { description: "One of the caller's imports." })
  importJob(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<TransferJob> {
    return this.service.get(ctx.principal!.userId, id, 'import');
  }

  @RequiresScopes('transfer:read')
  @Query(() => ImportPage, { description: "The caller's imports, newest first, a page at a time." })
  importJobs(@Args() { first, after }: PageArgs, @Ctx() ctx: SubgraphContext): Promise<Page<TransferJob>> {
    return this.service.list(ctx.principal!.userId, first, after);
  }

  @RequiresScopes('transfer:write')
  @Mutation(() => TransferJob, {
    description: 'Export the whole account as a zip, in the background; one at a time (conflict).',
  })
  startExport(@Args() { include }: ExportArgs, @Ctx() ctx: SubgraphContext): Promise<TransferJob> {
    return this.service.startExport(ctx.principal!, include ?? DEFAULT_EXPORT_PARTS);
  }

  @RequiresScopes('transfer:write')
  @Mutation(() => TransferJob, { description: 'Remove an export and its zip (a running one stops).' })
  deleteExport(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<TransferJob> {
    return this.service.deleteExport(ctx.principal!.userId, id);
  }

  @RequiresScopes('transfer:read')
  @Query(() => TransferJob, { description: "One of the caller's exports." })
  exportJob(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<TransferJob> {
    return this.service.get(ctx.principal!.userId, id, 'export');
  }

  @RequiresScopes('transfer:read')
  @Query(() => ExportFile, { description: "A succeeded export's zip (conflict before)." })
  async exportFile(@Args() { id }: IdArgs, @Ctx() ctx: SubgraphContext): Promise<ExportFile> {
    const file = await this.service.exportFile(ctx.principal!.userId, id);
    return { id, ...file, contentType: 'application/zip' };
  }

  @FieldResolver(() => TransferProgress)
  progress(@Root() job: TransferJob): TransferProgress {
    return { done: job.done, total: job.total };
  }
}

@Resolver(() => ExportFile)
export class ExportFileResolver {
  constructor(private readonly service: TransferService) {}

  @FieldResolver(() => String, { description: 'Bytes of the zip, base64: `length` (at most 1 MiB) from `offset`.' })
  chunk(@Root() file: ExportFile, @Args() { offset, length }: ChunkArgs, @Ctx() ctx: SubgraphContext): Promise<string> {
    return this.service.exportChunk(ctx.principal!.userId, file.id, offset, length);
  }
}
