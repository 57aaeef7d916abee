// Reading an uploaded zip entry by entry with yauzl (well kept, reads the central directory and
// then each entry as a stream, through a random-access reader, so the zip is never unpacked whole
// in memory or on disk; it refuses absolute paths, `..` and backslashes in names, and checks each
// entry's inflated size against its header). Here its reader reads the upload's pieces in the blob
// store. The guards every zip reader needs: the entry count and the total uncompressed size are
// checked against the limits from the central directory before any entry is read, and again while
// inflating; symbolic links are passed over.
import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { BlobStore } from '../../../lib/blob-store';

export class ZipRefused extends Error {}

export interface ZipLimits {
  maxEntries: number;
  maxUncompressedBytes: number;
}

/** The pieces of an upload as one random-access file. */
class PiecesReader extends yauzl.RandomAccessReader {
  constructor(
    private readonly store: BlobStore,
    private readonly pieces: { key: string; start: number; size: number }[],
  ) {
    super();
  }

  _readStreamForRange(start: number, end: number): Readable {
    const { store, pieces } = this;
    let at = start;
    const next = async (stream: Readable) => {
      try {
        if (at >= end) return void stream.push(null);
        const piece = pieces.find((p) => at >= p.start && at < p.start + p.size);
        if (!piece) throw new Error(`no piece holds byte ${at}`);
        const length = Math.min(end - at, piece.start + piece.size - at, 256 * 1024);
        const bytes = await store.read(piece.key, at - piece.start, length);
        if (!bytes?.length) throw new Error('the uploaded file is gone');
        at += bytes.length;
        stream.push(bytes);
      } catch (err) {
        stream.destroy(err as Error);
      }
    };
    return new Readable({
      read() {
        void next(this);
      },
    });
  }
}

export interface ZipEntry {
  /** The path in the zip, `/`-separated, as validated by yauzl. */
  path: string;
  size: number;
  /** The entry's bytes, at most `max` of them (null: larger than that, not read). */
  read(max: number): Promise<Buffer | null>;
}

const isSymlink = (entry: yauzl.Entry) => ((entry.externalFileAttributes >>> 16) & 0o170000) === 0o120000;

/**
 * Calls `each` for every file of the zip (directories and symbolic links passed over), one at a
 * time. Throws ZipRefused for a zip past the limits, a name yauzl refuses (`..`, absolute), or a
 * file that is no zip.
 */
export async function readZip(
  store: BlobStore,
  pieceKeys: string[],
  limits: ZipLimits,
  each: (entry: ZipEntry) => Promise<void>,
): Promise<{ skippedLinks: number }> {
  const pieces: { key: string; start: number; size: number }[] = [];
  let total = 0;
  for (const key of pieceKeys) {
    const size = (await store.size(key)) ?? 0;
    pieces.push({ key, start: total, size });
    total += size;
  }
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromRandomAccessReader(
        new PiecesReader(store, pieces),
        total,
        { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true },
        (err, z) => (err ? reject(err) : resolve(z)),
      ),
    );
  } catch (err) {
    throw new ZipRefused(`not a zip file (${(err as Error).message})`);
  }
  try {
    if (zip.entryCount > limits.maxEntries)
      throw new ZipRefused(
        `the zip holds ${zip.entryCount} entries; at most ${limits.maxEntries} are read (IMPORT_ZIP_MAX_ENTRIES)`,
      );
    let inflated = 0;
    let declared = 0;
    let skippedLinks = 0;
    for (;;) {
      const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
        const onEntry = (e: yauzl.Entry) => (cleanup(), resolve(e));
        const onEnd = () => (cleanup(), resolve(null));
        const onError = (err: Error) => (cleanup(), reject(new ZipRefused(`the zip is refused: ${err.message}`)));
        const cleanup = () => {
          zip.off('entry', onEntry);
          zip.off('end', onEnd);
          zip.off('error', onError);
        };
        zip.on('entry', onEntry);
        zip.on('end', onEnd);
        zip.on('error', onError);
        zip.readEntry();
      });
      if (!entry) break;
      if (entry.fileName.endsWith('/')) continue;
      if (isSymlink(entry)) {
        skippedLinks++;
        continue;
      }
      declared += entry.uncompressedSize;
      if (declared > limits.maxUncompressedBytes)
        throw new ZipRefused(
          `the zip inflates to more than ${limits.maxUncompressedBytes} bytes (IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES)`,
        );
      await each({
        path: entry.fileName,
        size: entry.uncompressedSize,
        read: async (max) => {
          if (entry.uncompressedSize > max) return null;
          const stream = await new Promise<Readable>((resolve, reject) =>
            zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))),
          );
          const chunks: Buffer[] = [];
          let size = 0;
          try {
            for await (const chunk of stream as AsyncIterable<Buffer>) {
              size += chunk.length;
              inflated += chunk.length;
              if (size > max || inflated > limits.maxUncompressedBytes)
                throw new ZipRefused(`${entry.fileName} inflates past its declared size`);
              chunks.push(chunk);
            }
          } catch (err) {
            stream.destroy();
            if (err instanceof ZipRefused) throw err;
            throw new ZipRefused(`${entry.fileName} cannot be read: ${(err as Error).message}`);
          }
          return Buffer.concat(chunks);
        },
      });
    }
    return { skippedLinks };
  } finally {
    zip.close();
  }
}
