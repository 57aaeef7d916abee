// The notes subgraph: Markdown notes with tags, wiki links and backlinks, folders, an archive and
// full-text search. Owns the `notes` database; meets other subgraphs only through federation
// references (owner: User, Note for hubs) and events (user.deleted in, note.* and note_folder.* out).
// Its REST routes (under /api/v1/notes) are declared in routes.ts, handed to the facade by module.ts.
import path from 'node:path';
import { migrationsIn } from '../../lib/database/migrations-in';
import { isSqlite } from '../../lib/database/driver';
import { EventConsumerPosition } from '../../lib/event-consumer';
import { declareExpensiveFields, sharedExpensiveGate } from '../../lib/kit/expensive';
import { sharedExpensiveReads } from '../../lib/kit/expensive-reads';
import { JOB_ENTITIES } from '../../lib/kit/jobs';
import { jobQueue, userCascade } from '../../lib/kit/user-cascade';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { UserReference } from '../../lib/user-reference';
import { Note } from './entities/note';
import { NoteFolder } from './entities/note-folder';
import { NoteLink, NoteTag } from './entities/note-rows';
import { UserCap } from '../../lib/kit/user-caps';
import { FolderService } from './folder-service';
import { PurgeParams, requestEmptyTrash, TrashRetention } from '../../lib/kit/trash';
import { NoteJobs } from './note-jobs';
import { NoteService } from './note-service';
import { FolderResolver } from './resolvers/folder-resolver';
import { NoteResolver, NoteSummaryResolver } from './resolvers/note-resolver';

const NOTES_TRASH_PURGE = 'notes.trash_purge';

export const notesSubgraph: SubgraphDefinition = {
  name: 'notes',
  entities: [Note, NoteFolder, NoteTag, NoteLink, UserCap, ...JOB_ENTITIES, OutboxEvent, EventConsumerPosition],
  migrations: migrationsIn(path.join(__dirname, 'migrations')),
  create({ config, dataSource, events, logger }) {
    const notes = new NoteService(dataSource, {
      trashRetentionDays: config.TRASH_RETENTION_DAYS,
      notesPerUser: config.NOTES_PER_USER,
      searchMaxTerms: config.SEARCH_MAX_TERMS,
      searchCandidates: config.SEARCH_CANDIDATES,
      expensive: sharedExpensiveGate(config),
      reads: sharedExpensiveReads(config),
    });
    declareExpensiveFields([{ type: 'Query', field: 'notes', whenArgument: 'q', kind: 'search' }]);
    const folders = new FolderService(dataSource, { foldersPerUser: config.NOTE_FOLDERS_PER_USER });
    // Tag renames and a deleted user's notes and folders: the kit's fair queue, in batches.
    const queue = jobQueue({ config, dataSource, logger });
    const jobs = new NoteJobs(dataSource, queue, { batchRows: config.NOTES_BATCH_ROWS });
    // The trash's purges (by retention, or an emptied trash), in batches on the same queue.
    queue.register<PurgeParams>({
      kind: NOTES_TRASH_PURGE,
      batchRows: config.NOTES_BATCH_ROWS,
      batch: notes.purgeBatch,
    });
    const retention = new TrashRetention({
      dataSource,
      queue,
      kind: NOTES_TRASH_PURGE,
      entity: Note,
      retentionDays: config.TRASH_RETENTION_DAYS,
      logger,
    });
    notes.onTrashed = (at) => retention.trashed(at);
    const cascade = userCascade({
      module: 'notes',
      dataSource,
      log: events,
      queue,
      config,
      logger,
      batchRows: config.NOTES_BATCH_ROWS,
      batch: jobs.cascadeBatch,
    });
    return {
      resolvers: [
        new NoteResolver(notes, jobs, (ownerId) => requestEmptyTrash(queue, NOTES_TRASH_PURGE, ownerId)),
        new NoteSummaryResolver(),
        new FolderResolver(folders),
      ],
      orphanedTypes: [UserReference],
      references: {
        // Other subgraphs (hubs) point at notes; only the owner sees one: another user's is null.
        Note: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? notes.find(ctx.principal.userId, ref.id) : null,
        },
      },
      async start() {
        // SQLite: search reads a hit's index entry per match, scattered over a large file; reading
        // it through a memory map (and a larger page cache) spares a system call per page.
        if (isSqlite(dataSource)) {
          await dataSource.query(`PRAGMA mmap_size = ${config.NOTES_SQLITE_MMAP_BYTES}`);
          await dataSource.query('PRAGMA cache_size = -65536');
        }
        queue.start();
        await cascade.start();
        await retention.start();
      },
      async stop() {
        retention.stop();
        await cascade.stop();
        await queue.stop();
      },
    };
  },
};
