// The JetStream object store (BLOB_STORE_URL=nats://host:port[,host:port…]/<bucket>) as an
// ObjectBackend.
//
// What the object store can do: put an object from a stream (its chunks first, then the metadata
// that names them, so a reader sees the old object or the new one), get one from its start, delete
// one, list every object's metadata. It has no ranged get: a reader of the chunk subject starts at
// the object's first chunk. So a whole object is kept here as fixed PARTs, each an object of its
// own, and a small object at the key that names them (`{"v":1,"size":…,"part":…,"id":…}`):
//   <key>                 the manifest, written last: publishing it publishes the object
//   <key>/<id>/<n>        its parts, PART_BYTES each (the last shorter)
// A Range read gets the manifest, then only the parts it overlaps (at most PART_BYTES more than
// asked for at each end). A rewrite writes new parts under a new id, replaces the manifest, then
// removes the old parts; a reader that finds a part gone reads the manifest again.
import type { ObjectBackend } from './object-store';
import { writeId } from './object-store';

/** The size of a whole object's parts: one chunk of the object store each (its default chunk is 128 KiB). */
export const PART_BYTES = 128 * 1024;

interface WholeManifest {
  v: 1;
  size: number;
  part: number;
  id: string;
}

type Nats = typeof import('@nats-io/transport-node');
type Obj = typeof import('@nats-io/obj');

/** `nats://[user:pass@]host:port[,host:port…]/<bucket>` (checked by lib/config.ts). */
export function natsLocation(url: string): { servers: string[]; bucket: string; user?: string; pass?: string } {
  const match = /^nats:\/\/(?:([^@/]*)@)?([^@/]+)\/([A-Za-z0-9_-]+)\/?$/.exec(url);
  if (!match) throw new Error(`not a nats:// blob store URL: ${url}`);
  const [user, pass] = match[1] ? match[1].split(':').map(decodeURIComponent) : [];
  const servers = match[2].split(',').map((h) => (/:\d+$/.test(h) ? h : `${h}:4222`));
  return { servers, bucket: match[3], user, pass };
}

/** For tests: `afterInfo` runs between reading an object's info and reading its chunks. */
export interface NatsBackendOptions {
  afterInfo?: (name: string) => Promise<void>;
}

export async function natsBackend(url: string, options: NatsBackendOptions = {}): Promise<ObjectBackend> {
  const { servers, bucket, user, pass } = natsLocation(url);
  const { connect }: Nats = await import('@nats-io/transport-node');
  const { Objm }: Obj = await import('@nats-io/obj');
  // @nats-io/nats-core's package names a types file that is not there: its types do not resolve.
  const nc: unknown = await connect({
    servers,
    name: 'blob-store',
    user,
    pass,
    maxReconnectAttempts: -1,
  });
  const os = await new Objm(nc as ConstructorParameters<typeof Objm>[0]).create(bucket);

  // Not os.getBlob: it reads the object's info, then opens a push consumer on the chunks that
  // info names; when the object is replaced or deleted in between (a growing object's manifest is
  // rewritten at every append, its segments deleted by commit) those chunks are purged and the
  // consumer waits forever for them. Here each chunk is fetched by its own request (the next
  // message on the object's chunk subject), answered or "no message": a purged chunk is seen.
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const jsm = await jetstreamManager(nc as Parameters<typeof jetstreamManager>[0]);
  const stream = `OBJ_${bucket}`;
  const readObject = async (name: string): Promise<Buffer | null | 'changed'> => {
    const info = await os.info(name);
    if (!info || info.deleted) return null;
    if (options.afterInfo) await options.afterInfo(name);
    if (info.size === 0) return Buffer.alloc(0);
    const subject = `$O.${bucket}.C.${info.nuid}`;
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (let seq = 0; size < info.size;) {
      const message = await jsm.streams.getMessage(stream, {
        seq: seq + 1,
        next_by_subj: subject,
      } as unknown as Parameters<typeof jsm.streams.getMessage>[1]); // the server takes it (nats-server 2.9+)
      if (!message) return 'changed'; // purged under the reader
      chunks.push(message.data);
      size += message.data.length;
      seq = message.seq;
    }
    return size === info.size ? Buffer.concat(chunks) : 'changed';
  };
  const getSmall = async (name: string): Promise<Buffer | null> => {
    for (let attempt = 0; ; attempt++) {
      const bytes = await readObject(name);
      if (bytes !== 'changed') return bytes;
      // Replaced while it was read: read the new one (or find it gone).
      if (attempt >= 4) throw new Error(`${name} keeps changing while it is read`);
    }
  };
  const putSmall = async (name: string, bytes: Uint8Array): Promise<void> => {
    await os.putBlob({ name }, bytes);
  };
  const removeSmall = async (name: string): Promise<void> => {
    await os.delete(name);
  };
  const manifestOf = async (name: string): Promise<WholeManifest | null> => {
    const raw = await getSmall(name);
    return raw ? (JSON.parse(raw.toString('utf8')) as WholeManifest) : null;
  };
  const removeParts = async (name: string, manifest: WholeManifest): Promise<void> => {
    const count = Math.ceil(manifest.size / manifest.part);
    for (let i = 0; i < count; i++) await removeSmall(`${name}/${manifest.id}/${i}`);
  };

  return {
    putSmall,
    getSmall,
    removeSmall,
    async write(name, pieces) {
      const id = writeId();
      let size = 0;
      let index = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async (all: boolean) => {
        let joined = Buffer.concat(pending);
        while (joined.length >= PART_BYTES || (all && joined.length)) {
          const part = joined.subarray(0, PART_BYTES);
          await putSmall(`${name}/${id}/${index++}`, part);
          joined = joined.subarray(part.length);
        }
        pending = joined.length ? [joined] : [];
        pendingBytes = joined.length;
      };
      try {
        for await (const piece of pieces) {
          pending.push(Buffer.from(piece));
          pendingBytes += piece.length;
          size += piece.length;
          if (pendingBytes >= PART_BYTES) await flush(false);
        }
        await flush(true);
        const old = await manifestOf(name);
        await putSmall(name, Buffer.from(JSON.stringify({ v: 1, size, part: PART_BYTES, id } satisfies WholeManifest)));
        if (old && old.id !== id) await removeParts(name, old).catch(() => undefined);
      } catch (err) {
        for (let i = 0; i < index; i++) await removeSmall(`${name}/${id}/${i}`).catch(() => undefined);
        throw err;
      }
      return size;
    },
    async size(name) {
      return (await manifestOf(name))?.size ?? null;
    },
    async read(name, offset, length) {
      for (let attempt = 0; ; attempt++) {
        const manifest = await manifestOf(name);
        if (!manifest) return null;
        const end = Math.min(manifest.size, offset + length);
        const pieces: Buffer[] = [];
        let gone = false;
        for (let i = Math.floor(offset / manifest.part); i * manifest.part < end; i++) {
          const part = await getSmall(`${name}/${manifest.id}/${i}`);
          if (!part) {
            gone = true;
            break;
          }
          const start = i * manifest.part;
          pieces.push(part.subarray(Math.max(0, offset - start), Math.min(part.length, end - start)));
        }
        if (!gone) return Buffer.concat(pieces);
        if (attempt >= 2) throw new Error(`the parts of ${name} keep changing`);
      }
    },
    async remove(name) {
      const manifest = await manifestOf(name);
      await removeSmall(name);
      if (manifest) await removeParts(name, manifest);
    },
    async *list(prefix) {
      for (const info of await os.list()) {
        if (info.deleted || !info.name.startsWith(prefix)) continue;
        yield { name: info.name, modified: new Date(info.mtime) };
      }
    },
    async prune(prefix, before) {
      // Parts that no manifest names: a writer that died before publishing, a rewrite that lost a race.
      const parts = new Map<string, { name: string; id: string; modified: Date }[]>();
      for (const info of await os.list()) {
        if (info.deleted || !info.name.startsWith(prefix)) continue;
        const match = /^(.+)\/([0-9a-f]{16})\/\d+$/.exec(info.name);
        if (!match || match[1].endsWith('.part')) continue;
        parts.set(match[1], [
          ...(parts.get(match[1]) ?? []),
          { name: info.name, id: match[2], modified: new Date(info.mtime) },
        ]);
      }
      let pruned = 0;
      for (const [name, list] of parts) {
        const manifest = await manifestOf(name);
        for (const part of list) {
          if (part.id === manifest?.id || part.modified >= before) continue;
          await removeSmall(part.name);
          pruned++;
        }
      }
      return pruned;
    },
    async close() {
      await (nc as { drain(): Promise<void> }).drain().catch(() => undefined);
    },
  };
}
