// The transfer module's constants, light enough for routes.ts (which must import no entity).
export const IMPORT_FORMATS = ['netscape', 'markdown', 'canvas', 'karakeep', 'export'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** The kit job kind that runs an import, a batch of records at a time. */
export const IMPORT_JOB_KIND = 'transfer.import';

/** The n-th uploaded piece of an import's file in the blob store. */
export const pieceKey = (id: string, n: number) => `import-${id}-${n}.bin`;
/** An import's records, as read from its file (one JSON object a line). */
export const recordsKey = (id: string) => `import-${id}.jsonl`;

/** The n-th file of an imported zip, kept until it is imported. */
export const attachmentKey = (id: string, n: number) => `import-${id}-a${n}.bin`;

/** Errors a job keeps (the contract's limit). */
export const MAX_JOB_ERRORS = 100;

/** The kit job kind that writes an export. */
export const EXPORT_JOB_KIND = 'transfer.export';
/** An export's zip in the blob store. */
export const exportKey = (id: string) => `export-${id}.zip`;
