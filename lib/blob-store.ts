// Where stored bytes live (rendered audio, cached encodings, Vault files): a small interface, so
// that an object store (BLOB_STORE_URL: a JetStream object store or S3, lib/blob-stores/) can take
// the place of the local disk (DATA_DIR/audio, DATA_DIR/vault: a folder every process must share).
// Keys are chosen by the module (`<synthesis id>.wav`, `<item id>.bin`), never by a caller.
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from './config';
import { ObjectBlobStore, type ObjectBackend } from './blob-stores/object-store';

export interface BlobStore {
  /** Stores the whole object; readers see either nothing or all of it. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Its size in bytes, or null when there is no such object. */
  size(key: string): Promise<number | null>;
  /** `length` bytes from `offset` (fewer at the end), or null when there is no such object. */
  read(key: string, offset: number, length: number): Promise<Buffer | null>;
  /** Removes it; removing what is not there is not an error. */
  delete(key: string): Promise<void>;
  /**
   * An object written piece by piece: readable (read, size) under `partialKey` while it grows,
   * then published whole under its key by `commit`. `partialKey` must end in `.part`.
   */
  begin(partialKey: string): Promise<BlobWriter>;
  /** Removes `.part` objects last written before `before`: left by writers that died. Answers how many. */
  prunePartial(before: Date): Promise<number>;
}

export interface BlobWriter {
  /** Adds bytes at the end; calls must not overlap. */
  append(bytes: Uint8Array): Promise<void>;
  /**
   * Writes `patch` at its offset (a header whose sizes are known only now), then publishes the
   * object under `key` at once: readers of `key` see nothing or all of it. Answers its size.
   */
  commit(key: string, patch?: { offset: number; bytes: Uint8Array }): Promise<number>;
  /** Removes the partial object (and publishes nothing). */
  abort(): Promise<void>;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const PARTIAL = '.part';

export class DiskBlobStore implements BlobStore {
  private ready?: Promise<unknown>;

  constructor(private readonly dir: string) {}

  private file(key: string): string {
    if (!KEY.test(key) || key.includes('..')) throw new Error(`not a blob key: ${JSON.stringify(key)}`);
    return path.join(this.dir, key);
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const file = this.file(key);
    this.ready ??= mkdir(this.dir, { recursive: true });
    await this.ready;
    // Written aside and renamed: a reader never sees half a file, and a crash leaves no key behind.
    const temp = path.join(this.dir, `.${key}.${randomUUID()}.part`);
    try {
      await writeFile(temp, bytes);
      await rename(temp, file);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  async begin(partialKey: string): Promise<BlobWriter> {
    if (!partialKey.endsWith(PARTIAL)) throw new Error(`not a partial blob key: ${JSON.stringify(partialKey)}`);
    const file = this.file(partialKey);
    this.ready ??= mkdir(this.dir, { recursive: true });
    await this.ready;
    const handle = await open(file, 'w');
    let size = 0;
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await handle.close();
    };
    return {
      append: async (bytes) => {
        await handle.write(bytes, 0, bytes.length, size);
        size += bytes.length;
      },
      commit: async (key, patch) => {
        const target = this.file(key);
        try {
          if (patch) await handle.write(patch.bytes, 0, patch.bytes.length, patch.offset);
          await close();
          await rename(file, target);
        } catch (err) {
          await close().catch(() => undefined);
          await rm(file, { force: true });
          throw err;
        }
        return size;
      },
      abort: async () => {
        await close().catch(() => undefined);
        await rm(file, { force: true });
      },
    };
  }

  async prunePartial(before: Date): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let pruned = 0;
    for (const name of names) {
      if (!name.endsWith(PARTIAL)) continue;
      const file = path.join(this.dir, name);
      const info = await stat(file).catch(() => null);
      if (info && info.mtime < before) {
        await rm(file, { force: true });
        pruned++;
      }
    }
    return pruned;
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.file(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async read(key: string, offset: number, length: number): Promise<Buffer | null> {
    let handle;
    try {
      handle = await open(this.file(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }
}

interface RemoteStores {
  backend: () => Promise<ObjectBackend>;
  close(): Promise<void>;
}

/** One connection (NATS) or client (S3) per BLOB_STORE_URL in a process, opened at the first use. */
const remotes = new Map<string, RemoteStores>();

function remote(url: string): RemoteStores {
  let entry = remotes.get(url);
  if (entry) return entry;
  let opening: Promise<ObjectBackend> | undefined;
  const open = async (): Promise<ObjectBackend> => {
    if (url.startsWith('nats:')) return (await import('./blob-stores/nats')).natsBackend(url);
    const s3 = await import('./blob-stores/s3');
    return s3.s3Backend(s3.s3Location(new URL(url)));
  };
  entry = {
    // A store that cannot be reached fails this call; the next one tries again.
    backend: () =>
      (opening ??= open().catch((err) => {
        opening = undefined;
        throw err;
      })),
    async close() {
      const was = opening;
      opening = undefined;
      if (remotes.get(url) === entry) remotes.delete(url);
      if (was) await (await was.catch(() => null))?.close();
    },
  };
  remotes.set(url, entry);
  return entry;
}

/**
 * The store a module keeps its blobs in, under its own area (a name, e.g. `audio`): BLOB_STORE_URL
 * when set (a JetStream object store or S3, each area under its own prefix), else `folder`, the
 * module's folder on disk (its own setting, or a folder under DATA_DIR), which it passes in.
 */
export function openBlobStore(config: Pick<Config, 'BLOB_STORE_URL'>, area: string, folder: string): BlobStore {
  if (!config.BLOB_STORE_URL) return new DiskBlobStore(folder);
  const url = config.BLOB_STORE_URL;
  const prefix = url.startsWith('s3:') ? s3Prefix(url) : '';
  return new ObjectBlobStore(remote(url).backend, `${prefix}${area}/`);
}

function s3Prefix(url: string): string {
  const path = decodeURIComponent(new URL(url).pathname.replace(/^\/+|\/+$/g, ''));
  return path ? `${path}/` : '';
}

/** Closes the connections of the remote stores (at shutdown); a later use opens them again. */
export async function closeBlobStores(): Promise<void> {
  await Promise.all([...remotes.values()].map((r) => r.close()));
}
