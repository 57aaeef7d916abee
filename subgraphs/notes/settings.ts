// The notes module's settings: its fragment of the configuration (lib/config.ts merges it; each
// `.describe()` is the setting's row in docs/configuration.md, written by `npm run docs:config`).
import type { z } from 'zod';
import type { SettingKinds } from '../../lib/config';

export const notesSettings = ({ int }: SettingKinds) => ({
  NOTES_PER_USER: int(1, 100_000_000)
    .default(100_000)
    .describe(
      'notes one user keeps; past it a create is 409 `conflict` with `details: { limit, max, count }` ([notes.md](notes.md))',
    ),
  NOTE_FOLDERS_PER_USER: int(1, 1_000_000)
    .default(1000)
    .describe('note folders one user keeps; past it a create is 409 `conflict` with `details: { limit, max, count }`'),
  NOTES_BATCH_ROWS: int(1, 1000)
    .default(200)
    .describe(
      "notes (or folders) per transaction of the notes module's background work: a tag rename, a deleted user's notes (at most 1,000)",
    ),
  NOTES_SQLITE_MMAP_BYTES: int(0, 64 * 1024 ** 3)
    .default(1024 ** 3)
    .describe(
      'SQLite: how much of the notes database is read through a memory map (`PRAGMA mmap_size`; 0: none); search reads many scattered index pages',
    ),
  NOTES_BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024)
    .default(1024 * 1024)
    .describe(
      'the request body limit of `POST /notes` and `PATCH /notes/{id}` (1 MiB: 100,000 characters in any script, escaped); other routes keep `BODY_LIMIT_BYTES`',
    ),
});

declare module '../../lib/config' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the module's settings join Config
  interface ModuleSettings extends z.output<z.ZodObject<ReturnType<typeof notesSettings>>> {}
}
