// The notes subgraph: Markdown notes with tags, wiki links and backlinks, folders, an archive and
// full-text search. Owns the `notes` database; meets other subgraphs only through federation
// references (owner: User, Note for hubs) and events (user.deleted in, note.* and note_folder.* out).
// Its REST routes (under /api/v1/notes) are declared in routes.ts, listed in subgraphs/routes.ts.
import { isSqlite } from '../../lib/database/driver';
import { onCommit } from '../../lib/database/transactions';
import { EventConsumer, EventConsumerPosition } from '../../lib/event-consumer';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { UserReference } from '../../lib/user-reference';
import { Note } from './entities/note';
import { NoteFolder } from './entities/note-folder';
import { NoteJob, NoteLink, NoteTag } from './entities/note-rows';
import { UserCap } from '../../lib/kit/user-caps';
import { NotesUserCaps1796000000000 } from './migrations/1796000000000-NotesUserCaps';
import { FolderService } from './folder-service';
import { CreateNoteTables1795662977244 } from './migrations/1795662977244-CreateNoteTables';
import { addJob, NoteJobRunner } from './note-jobs';
import { NoteService } from './note-service';
import { FolderResolver } from './resolvers/folder-resolver';
import { NoteResolver, NoteSummaryResolver } from './resolvers/note-resolver';

export const notesSubgraph: SubgraphDefinition = {
  name: 'notes',
  entities: [Note, NoteFolder, NoteTag, NoteLink, UserCap, NoteJob, OutboxEvent, EventConsumerPosition],
  migrations: [CreateNoteTables1795662977244, NotesUserCaps1796000000000],
  create({ config, dataSource, events, logger }) {
    const notes = new NoteService(dataSource, { notesPerUser: config.NOTES_PER_USER });
    const folders = new FolderService(dataSource, { foldersPerUser: config.NOTE_FOLDERS_PER_USER });
    const jobs = new NoteJobRunner(dataSource, { batchRows: config.NOTES_BATCH_ROWS, logger });
    // A deleted user's notes and folders go too (auth's user.deleted): the consumer records a job
    // in the transaction that advances its position (exactly once), the runner does it in batches.
    let cascadeRecorded = false;
    const cascade = new EventConsumer({
      name: 'notes.user-deleted',
      dataSource,
      log: events,
      types: ['user.deleted'],
      intervalMs: config.EVENT_POLL_MS,
      maxIntervalMs: config.POLL_MAX_IDLE_MS,
      logger,
      handle: async (m, event) => {
        await addJob(m, event.userId, 'user_cascade');
        cascadeRecorded = true;
      },
    });
    let stopWaking: (() => void) | undefined;
    return {
      resolvers: [new NoteResolver(notes, jobs), new NoteSummaryResolver(), new FolderResolver(folders)],
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
        stopWaking = onCommit(dataSource, () => {
          if (!cascadeRecorded) return;
          cascadeRecorded = false;
          void jobs.wake();
        });
        // What a stopped process left unfinished.
        void jobs.wake();
        await cascade.start();
      },
      async stop() {
        stopWaking?.();
        await cascade.stop();
        await jobs.stop();
      },
    };
  },
};
