// The notes module's event types, each with its payload's schema (lib/kit/typed-events.ts): what
// notes' services publish and what consumers (hubs' references, webhooks) read. Never the body.
import { z } from 'zod';
import { eventType } from '../../lib/kit/typed-events';

/** Why rows went without their owner asking: the owner was deleted (the kit's cascade), or the trash's retention ended. */
const reason = z.enum(['user_deleted', 'purged']).optional();

const note = z.strictObject({
  note_id: z.string(),
  title: z.string(),
  version: z.number().int(),
  folder_id: z.string().nullable(),
  /** The fields an update changed. */
  changed: z.array(z.string()).optional(),
  reason,
});

const folder = z.strictObject({
  folder_id: z.string(),
  name: z.string(),
  parent_id: z.string().nullable(),
  version: z.number().int(),
  changed: z.array(z.string()).optional(),
  reason,
});

export const NoteCreated = eventType('note.created', note);
export const NoteUpdated = eventType('note.updated', note);
export const NoteArchived = eventType('note.archived', note);
export const NoteUnarchived = eventType('note.unarchived', note);
export const NoteDeleted = eventType('note.deleted', note);
/** Moved to the trash; purged at `purge_at` unless restored. */
export const NoteTrashed = eventType('note.trashed', note.extend({ purge_at: z.string() }));
export const NoteRestored = eventType('note.restored', note);
export const NoteFolderCreated = eventType('note_folder.created', folder);
export const NoteFolderUpdated = eventType('note_folder.updated', folder);
export const NoteFolderDeleted = eventType('note_folder.deleted', folder);

export const notesEvents = [
  NoteCreated,
  NoteUpdated,
  NoteArchived,
  NoteUnarchived,
  NoteDeleted,
  NoteTrashed,
  NoteRestored,
  NoteFolderCreated,
  NoteFolderUpdated,
  NoteFolderDeleted,
];
