import { IsBase64, IsIn, IsOptional, IsUUID, Max, MaxLength, Min } from 'class-validator';
import {
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  Float,
  ID,
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
import { MAX_PIECE_BYTES, TransferService } from '../transfer-service';

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

  @FieldResolver(() => TransferProgress)
  progress(@Root() job: TransferJob): TransferProgress {
    return { done: job.done, total: job.total };
  }
}
