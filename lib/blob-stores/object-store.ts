// The BlobStore on an object store without append (a JetStream object store, S3): whole objects
// are the store's own, written at once and published atomically by the store; an object written
// piece by piece (`begin`) is readable while it grows as SEGMENTS plus a MANIFEST, then copied into
// a whole object by `commit`. See docs/operations.md, "Files in an object store".
//
// Names inside the store (after the area's prefix, `audio/` or `vault/`):
//   <key>                 a whole object (the backend decides how it keeps it)
//   <key>.part            the manifest of a growing object: {"v":1,"segments":[length, …]}
//   <key>.part/<n>        its segments, one per append, written before the manifest that names them
// A reader of a growing object reads the manifest, then the segments it needs: it sees every append
// whose manifest was written, never a segment's half. `commit` streams the segments back (the patch
// applied) into the whole object, then removes the segments and the manifest.
import { randomUUID } from 'node:crypto';
import type { BlobStore, BlobWriter } from '../blob-store';

/** What a store must do for ObjectBlobStore. Names are the store's own (the prefix included). */
export interface ObjectBackend {
  /** Stores a small object whole (a manifest, a segment): readers see the old one or the new one. */
  putSmall(name: string, bytes: Uint8Array): Promise<void>;
  /** A small object whole, or null. */
  getSmall(name: string): Promise<Buffer | null>;
  /** Writes a whole object from pieces; published at once when the last piece is stored. */
  write(name: string, pieces: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<number>;
  /** The whole object's size, or null. */
  size(name: string): Promise<number | null>;
  /** `length` bytes of the whole object from `offset` (fewer at the end), or null. */
  read(name: string, offset: number, length: number): Promise<Buffer | null>;
  /** Removes a whole object; removing what is not there is not an error. */
  remove(name: string): Promise<void>;
  /** Removes a small object. */
  removeSmall(name: string): Promise<void>;
  /** Every name under the prefix, with when it was last written. */
  list(prefix: string): AsyncIterable<{ name: string; modified: Date }>;
  /** Removes what the backend itself leaves behind (parts of writers that died), older than `before`. */
  prune?(prefix: string, before: Date): Promise<number>;
  close(): Promise<void>;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const PARTIAL = '.part';

interface Manifest {
  v: 1;
  segments: number[];
}

function checkKey(key: string): void {
  if (!KEY.test(key) || key.includes('..')) throw new Error(`not a blob key: ${JSON.stringify(key)}`);
}

export class ObjectBlobStore implements BlobStore {
  constructor(
    private readonly backend: () => Promise<ObjectBackend>,
    /** `audio/`, `vault/`, behind the URL's own prefix. */
    private readonly prefix: string,
  ) {}

  private name(key: string): string {
    checkKey(key);
    return this.prefix + key;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const name = this.name(key);
    await (await this.backend()).write(name, [bytes]);
  }

  private async manifest(name: string): Promise<Manifest | null> {
    // A store that replaces an object in place (s3rver writes its file where it stands) can hand a
    // reader a torn manifest while it is rewritten: read it again, a few times, before giving up.
    for (let attempt = 1; ; attempt++) {
      const raw = await (await this.backend()).getSmall(name);
      if (!raw) return null;
      try {
        return JSON.parse(raw.toString('utf8')) as Manifest;
      } catch (err) {
        if (attempt >= 5) throw err;
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt));
      }
    }
  }

  async size(key: string): Promise<number | null> {
    const name = this.name(key);
    if (key.endsWith(PARTIAL)) {
      const manifest = await this.manifest(name);
      return manifest ? manifest.segments.reduce((a, b) => a + b, 0) : null;
    }
    return (await this.backend()).size(name);
  }

  async read(key: string, offset: number, length: number): Promise<Buffer | null> {
    const name = this.name(key);
    const backend = await this.backend();
    if (!key.endsWith(PARTIAL)) return backend.read(name, offset, length);
    // A growing object: the segments that hold [offset, offset + length), as far as the manifest goes.
    for (let attempt = 0; ; attempt++) {
      const manifest = await this.manifest(name);
      if (!manifest) return null;
      const pieces: Buffer[] = [];
      let start = 0;
      let missing = false;
      const end = offset + length;
      for (let i = 0; i < manifest.segments.length && start < end; i++) {
        const segmentEnd = start + manifest.segments[i];
        if (segmentEnd > offset) {
          const segment = await backend.getSmall(`${name}/${i}`);
          if (!segment) {
            missing = true; // committed or aborted meanwhile
            break;
          }
          pieces.push(segment.subarray(Math.max(0, offset - start), Math.min(segment.length, end - start)));
        }
        start = segmentEnd;
      }
      if (!missing) return Buffer.concat(pieces);
      if (attempt >= 2) return null;
    }
  }

  async delete(key: string): Promise<void> {
    const name = this.name(key);
    const backend = await this.backend();
    if (key.endsWith(PARTIAL)) await this.removePartial(backend, name);
    else await backend.remove(name);
  }

  private async removePartial(backend: ObjectBackend, name: string, segments?: number): Promise<void> {
    const count = segments ?? (await this.manifest(name))?.segments.length ?? 0;
    await backend.removeSmall(name);
    for (let i = 0; i < count; i++) await backend.removeSmall(`${name}/${i}`);
  }

  async begin(partialKey: string): Promise<BlobWriter> {
    if (!partialKey.endsWith(PARTIAL)) throw new Error(`not a partial blob key: ${JSON.stringify(partialKey)}`);
    const name = this.name(partialKey);
    const backend = await this.backend();
    const segments: number[] = [];
    // Written at once: an empty object is there (size 0) as on disk.
    await backend.putSmall(name, Buffer.from(JSON.stringify({ v: 1, segments } satisfies Manifest)));
    let size = 0;
    return {
      append: async (bytes) => {
        if (!bytes.length) return;
        await backend.putSmall(`${name}/${segments.length}`, bytes);
        segments.push(bytes.length);
        size += bytes.length;
        await backend.putSmall(name, Buffer.from(JSON.stringify({ v: 1, segments } satisfies Manifest)));
      },
      commit: async (key, patch) => {
        const target = this.name(key);
        const count = segments.length;
        async function* pieces() {
          let start = 0;
          for (let i = 0; i < count; i++) {
            const segment = await backend.getSmall(`${name}/${i}`);
            if (!segment || segment.length !== segments[i]) throw new Error(`segment ${i} of ${name} is gone`);
            if (patch) {
              // The part of the patch that falls in this segment.
              const from = Math.max(patch.offset, start);
              const to = Math.min(patch.offset + patch.bytes.length, start + segment.length);
              if (from < to) segment.set(patch.bytes.subarray(from - patch.offset, to - patch.offset), from - start);
            }
            start += segment.length;
            yield segment;
          }
        }
        try {
          await backend.write(target, pieces());
        } finally {
          await this.removePartial(backend, name, count).catch(() => undefined);
        }
        return size;
      },
      abort: async () => {
        await this.removePartial(backend, name, segments.length).catch(() => undefined);
      },
    };
  }

  async prunePartial(before: Date): Promise<number> {
    const backend = await this.backend();
    const manifests = new Map<string, Date>();
    const segments = new Map<string, { name: string; modified: Date }[]>();
    for await (const entry of backend.list(this.prefix)) {
      const rest = entry.name.slice(this.prefix.length);
      if (rest.endsWith(PARTIAL) && !rest.includes('/')) manifests.set(entry.name, entry.modified);
      else {
        const slash = rest.indexOf('/');
        if (slash > 0 && rest.slice(0, slash).endsWith(PARTIAL)) {
          const owner = this.prefix + rest.slice(0, slash);
          segments.set(owner, [...(segments.get(owner) ?? []), entry]);
        }
      }
    }
    let pruned = 0;
    // A growing object's manifest is rewritten at every append: its time is that of the last write.
    for (const [name, modified] of manifests) {
      if (modified >= before) continue;
      await backend.removeSmall(name);
      for (const segment of segments.get(name) ?? []) await backend.removeSmall(segment.name);
      pruned++;
    }
    // Segments whose manifest is gone (a writer that died between the two writes, or mid-abort).
    for (const [owner, list] of segments) {
      if (manifests.has(owner)) continue;
      for (const segment of list) if (segment.modified < before) await backend.removeSmall(segment.name);
    }
    if (backend.prune) await backend.prune(this.prefix, before);
    return pruned;
  }
}

/** A unique part of a name (a whole object's parts on NATS). */
export function writeId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 16);
}
