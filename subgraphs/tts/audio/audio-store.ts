// Where rendered audio lives: a small interface, so that an object store can take the place
// of the local disk (the default, under DATA_DIR/audio). Keys are chosen by the TTS module
// (`<synthesis id>.wav`), never by a caller.
import { randomUUID } from 'node:crypto';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface AudioStore {
  /** Stores the whole object; readers see either nothing or all of it. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Its size in bytes, or null when there is no such object. */
  size(key: string): Promise<number | null>;
  /** `length` bytes from `offset` (fewer at the end), or null when there is no such object. */
  read(key: string, offset: number, length: number): Promise<Buffer | null>;
  /** Removes it; removing what is not there is not an error. */
  delete(key: string): Promise<void>;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export class DiskAudioStore implements AudioStore {
  private ready?: Promise<unknown>;

  constructor(private readonly dir: string) {}

  private file(key: string): string {
    if (!KEY.test(key) || key.includes('..')) throw new Error(`not an audio key: ${JSON.stringify(key)}`);
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
