// S3 or any S3-compatible store (BLOB_STORE_URL=s3://<bucket>[/<prefix>]?endpoint=<url>&region=<r>
// &force_path_style=true|false) as an ObjectBackend, through the AWS SDK. Credentials: the SDK's
// default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws files, web
// identity, instance roles).
//
// A whole object is one S3 object: written by a PutObject, or a multipart upload when it is larger
// than one part (lib-storage's Upload, which completes the upload only once every part is stored):
// either way S3 publishes it at once. A Range read is a ranged GET (`Range: bytes=a-b`): only the
// bytes asked for cross the network.
import { Readable } from 'node:stream';
import type { S3Client as S3ClientType } from '@aws-sdk/client-s3';
import type { ObjectBackend } from './object-store';

type S3 = typeof import('@aws-sdk/client-s3');
type Storage = typeof import('@aws-sdk/lib-storage');

/** Parts of a multipart upload: S3's minimum, held in memory one at a time. */
const UPLOAD_PART_BYTES = 5 * 1024 * 1024;

export interface S3Location {
  bucket: string;
  /** The URL's path, with a trailing `/` when there is one. */
  prefix: string;
  endpoint?: string;
  region?: string;
  forcePathStyle: boolean;
}

export function s3Location(url: URL): S3Location {
  const prefix = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, ''));
  const style = url.searchParams.get('force_path_style');
  return {
    bucket: decodeURIComponent(url.hostname),
    prefix: prefix ? `${prefix}/` : '',
    endpoint: url.searchParams.get('endpoint') ?? undefined,
    region: url.searchParams.get('region') ?? undefined,
    forcePathStyle: style === 'true' || style === '1',
  };
}

function status(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

function notFound(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return name === 'NoSuchKey' || name === 'NotFound' || status(err) === 404;
}

export async function s3Backend(location: S3Location): Promise<ObjectBackend> {
  const s3: S3 = await import('@aws-sdk/client-s3');
  const { Upload }: Storage = await import('@aws-sdk/lib-storage');
  const client: S3ClientType = new s3.S3Client({
    region: location.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    endpoint: location.endpoint,
    forcePathStyle: location.forcePathStyle,
    // Checksums only where S3 requires them: the SDK's default (CRC32 on every upload, in
    // aws-chunked bodies) is refused by several S3-compatible stores.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const Bucket = location.bucket;

  const getSmall = async (name: string): Promise<Buffer | null> => {
    try {
      const res = await client.send(new s3.GetObjectCommand({ Bucket, Key: name }));
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  };
  const removeSmall = async (name: string): Promise<void> => {
    await client.send(new s3.DeleteObjectCommand({ Bucket, Key: name }));
  };

  const size = async (name: string): Promise<number | null> => {
    try {
      const head = await client.send(new s3.HeadObjectCommand({ Bucket, Key: name }));
      return head.ContentLength ?? 0;
    } catch (err) {
      if (notFound(err)) return null;
      throw err;
    }
  };

  return {
    size,
    getSmall,
    removeSmall,
    remove: removeSmall,
    async putSmall(name, bytes) {
      await client.send(new s3.PutObjectCommand({ Bucket, Key: name, Body: bytes, ContentLength: bytes.length }));
    },
    async write(name, pieces) {
      // Up to one part: a single PutObject. Beyond: a multipart upload (lib-storage's Upload), one
      // part in memory at a time, completed once every part is stored.
      const iterator = (async function* () {
        yield* pieces;
      })();
      const head: Uint8Array[] = [];
      let size = 0;
      let more = true;
      while (size <= UPLOAD_PART_BYTES) {
        const next = await iterator.next();
        if (next.done) {
          more = false;
          break;
        }
        head.push(next.value);
        size += next.value.length;
      }
      if (!more) {
        const Body = Buffer.concat(head);
        await client.send(new s3.PutObjectCommand({ Bucket, Key: name, Body, ContentLength: Body.length }));
        return size;
      }
      const rest = Readable.from(
        (async function* () {
          yield* head;
          for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
            size += next.value.length;
            yield next.value;
          }
        })(),
      );
      const upload = new Upload({
        client,
        params: { Bucket, Key: name, Body: rest },
        partSize: UPLOAD_PART_BYTES,
        queueSize: 1,
        leavePartsOnError: false,
      });
      await upload.done();
      return size;
    },
    async read(name, offset, length) {
      if (length <= 0) return (await size(name)) === null ? null : Buffer.alloc(0);
      try {
        const res = await client.send(
          new s3.GetObjectCommand({ Bucket, Key: name, Range: `bytes=${offset}-${offset + length - 1}` }),
        );
        const bytes = Buffer.from(await res.Body!.transformToByteArray());
        // A store that ignores Range answers the whole object (200): cut it (and say so in the docs).
        return res.ContentRange ? bytes : bytes.subarray(offset, offset + length);
      } catch (err) {
        if (notFound(err)) return null;
        // 416: the object is there, the offset is at or past its end.
        if (status(err) === 416 || (err as { name?: string }).name === 'InvalidRange') return Buffer.alloc(0);
        // Some stores fail a ranged GET of an empty object otherwise (s3rver drops the connection).
        const known = await size(name).catch(() => undefined);
        if (known === null) return null;
        if (known !== undefined && known <= offset) return Buffer.alloc(0);
        throw err;
      }
    },
    async *list(prefix) {
      for await (const page of s3.paginateListObjectsV2({ client }, { Bucket, Prefix: prefix })) {
        for (const object of page.Contents ?? [])
          if (object.Key) yield { name: object.Key, modified: object.LastModified ?? new Date(0) };
      }
    },
    async prune(prefix, before) {
      // Multipart uploads of writers that died: their parts are stored (and billed) until aborted.
      let pruned = 0;
      let res;
      try {
        res = await client.send(new s3.ListMultipartUploadsCommand({ Bucket, Prefix: prefix }));
      } catch (err) {
        // Not every S3-compatible store lists uploads (s3rver does not): a lifecycle rule
        // (AbortIncompleteMultipartUpload) does the same there.
        if ((err as { name?: string }).name === 'NotImplemented' || status(err) === 501) return 0;
        throw err;
      }
      for (const upload of res.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || (upload.Initiated && upload.Initiated >= before)) continue;
        await client.send(new s3.AbortMultipartUploadCommand({ Bucket, Key: upload.Key, UploadId: upload.UploadId }));
        pruned++;
      }
      return pruned;
    },
    close() {
      client.destroy();
      return Promise.resolve();
    },
  };
}
