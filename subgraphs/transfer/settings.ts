// The transfer module's settings (imports and exports): its fragment of the configuration
// (lib/config.ts merges it; each `.describe()` is the setting's row in docs/configuration.md,
// written by `npm run docs:config`).
import path from 'node:path';
import { z } from 'zod';
import type { Config, SettingKinds } from '../../lib/config';

export const transferSettings = ({ int }: SettingKinds) => ({
  IMPORT_MAX_BYTES: int(1024, 4 * 1024 ** 3)
    .default(256 * 1024 * 1024)
    .describe(
      'the largest file `POST /api/v1/imports` takes; it is streamed to the blob store in pieces and never held whole in memory; a larger `Content-Length` is refused at once, a larger chunked body as soon as it passes the limit: 413 `payload_too_large` (what was received is removed)',
    )
    .meta({ shownDefault: '`268435456` (256 MiB)' }),
  TRANSFER_DIR: z
    .string()
    .optional()
    .describe(
      'where uploaded import files (and export zips) are stored (the blob store); every transfer process must see the same folder (unless `BLOB_STORE_URL` is set: then they are its `transfer/` objects)',
    )
    .meta({ shownDefault: '`DATA_DIR/transfer`' }),
  IMPORT_BATCH_RECORDS: int(1, 1000)
    .default(50)
    .describe(
      "records (bookmarks, notes, files) an import applies per batch of the kit's fair job runner before it goes back to the queue, so another user's job waits at most one batch",
    ),
  IMPORT_MAX_RECORDS: int(1, 10_000_000)
    .default(1_000_000)
    .describe('records one import file may hold; more: the job fails before importing anything'),
  IMPORT_STALE_SECONDS: int(60, 7 * 86_400)
    .default(86_400)
    .describe(
      'an import whose upload never finished (the client went away) is failed and its pieces removed after this long',
    )
    .meta({ shownDefault: '`86400` (24 h)' }),
  IMPORT_ZIP_MAX_ENTRIES: int(1, 10_000_000)
    .default(100_000)
    .describe(
      'entries an imported zip (`markdown`) may hold, read from its central directory before any entry is read; more: the job fails with that error',
    ),
  IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES: int(1024, 64 * 1024 ** 3)
    .default(2 * 1024 ** 3)
    .describe(
      'bytes an imported zip may inflate to, all its entries together: checked against the sizes the zip declares before each entry is read, and against what is actually inflated (an entry inflating past its declared size fails the job too); a zip bomb stops there',
    )
    .meta({ shownDefault: '`2147483648` (2 GiB)' }),
  EXPORT_RETENTION_DAYS: int(1, 365)
    .default(7)
    .describe(
      'days an export (`POST /api/v1/exports`) and its zip are kept; then both are removed (swept now and then); `DELETE` removes one earlier',
    ),
});

/** Where uploads and export zips are kept on disk (BLOB_STORE_URL unset): TRANSFER_DIR, else DATA_DIR/transfer. */
export const transferDir = (config: Pick<Config, 'TRANSFER_DIR' | 'dataDir'>): string =>
  path.resolve(config.TRANSFER_DIR ?? path.join(config.dataDir, 'transfer'));

declare module '../../lib/config' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the module's settings join Config
  interface ModuleSettings extends z.output<z.ZodObject<ReturnType<typeof transferSettings>>> {}
}
