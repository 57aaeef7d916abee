// A route that answers a file (route.download), fetched a piece at a time through GraphQL.
import type { Request, Response } from 'express';
import type { Config } from '../lib/config';
import type { GraphQLClient } from './graphql-client';
import { graphqlOperation } from './graphql-mapping';
import { routeInput, run } from './route-call';
import type { RouteSpec } from './route-spec';
import { sendError } from './errors';
import { drained } from './slow-reader';
import { compileValidator } from './validation';

/** The bytes of one download piece: what the first request fetches, and each later one. */
const DOWNLOAD_PIECE_BYTES = 512 * 1024;

/**
 * A file fetched a piece at a time through GraphQL and sent as it comes, with one byte range
 * (RFC 9110: 206 + Content-Range, 416 past the end; several ranges get the whole file),
 * ETag / If-None-Match / If-Range, and HEAD. Errors before the first byte are error objects;
 * after it, all that can be done is to cut the response short.
 */
export function downloadHandler(route: RouteSpec, graphql: GraphQLClient, config: Config) {
  const validate = compileValidator(route);
  const operation = graphqlOperation(route);
  const { chunk, formats, stream } = route.download!;
  const names = Object.keys(formats ?? {});
  return async (req: Request, res: Response) => {
    const input = routeInput(route, validate, req, res);
    if (!input) return;
    let contentType = route.download!.contentType;
    if (formats) {
      // ?format= wins; else Accept (none, or */*: the first format); an Accept that matches none is 406.
      let name = typeof input.query.format === 'string' ? input.query.format : undefined;
      if (name === undefined) {
        const accepted = req.headers.accept ? req.accepts(names.map((n) => formats[n])) : formats[names[0]];
        name = names.find((n) => formats[n] === accepted);
        if (name === undefined)
          return sendError(
            res,
            'not_acceptable',
            `This is served as ${names.map((n) => formats[n]).join(', ')}; Accept names none of them.`,
            { accepted: names.map((n) => formats[n]) },
          );
      }
      input.query.format = name;
      contentType = formats[name];
      res.vary('Accept');
    }
    const variables = operation.variables(input);
    const meta = await run(graphql, route, req, res, operation.query, variables);
    if (!meta) return;
    const { bytes, etag, content_type, file_name } = meta.data!.result as {
      bytes: number | null;
      etag: string;
      content_type?: string;
      file_name?: string;
    };
    if (bytes === null && stream)
      return streamDownload(req, res, graphql, route, config, contentType, stream, variables);
    if (bytes === null) return sendError(res, 'internal_error');
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'private, max-age=3600');
    if (req.fresh) return void res.status(304).end();

    let [start, end] = [0, bytes - 1];
    const ifRange = req.headers['if-range'];
    const ranges =
      req.headers.range && (!ifRange || ifRange === etag) ? req.range(bytes, { combine: true }) : undefined;
    if (ranges === -1) {
      res.setHeader('Content-Range', `bytes */${bytes}`);
      return sendError(
        res,
        'range_not_satisfiable',
        `The file has ${bytes} bytes; the range asked for lies outside it.`,
        { size: bytes },
      );
    }
    const partial = Array.isArray(ranges) && ranges.type === 'bytes' && ranges.length === 1;
    if (partial) [start, end] = [ranges[0].start, ranges[0].end];

    /** The bytes from `offset` (empty at the end, or when the fetch failed). */
    const piece = async (offset: number): Promise<Buffer> => {
      const length = Math.min(DOWNLOAD_PIECE_BYTES, end + 1 - offset);
      if (length <= 0) return Buffer.alloc(0);
      const result = await run(graphql, route, req, res, chunk, { ...variables, offset, length });
      return Buffer.from((result?.data?.result as { chunk?: string } | undefined)?.chunk ?? '', 'base64');
    };
    const first = req.method === 'HEAD' ? Buffer.alloc(0) : await piece(start);
    if (res.headersSent) return; // the piece failed, and its error object went out

    res.status(partial ? 206 : 200);
    // attachment() sets a type from the name's extension: the sniffed type is set after it.
    if (route.download!.attachment) res.attachment(file_name ?? 'download');
    res.type(content_type ?? contentType);
    if (route.download!.attachment) {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    }
    res.setHeader('Content-Length', String(end + 1 - start));
    if (partial) res.setHeader('Content-Range', `bytes ${start}-${end}/${bytes}`);
    if (req.method === 'HEAD') return void res.end();
    let open = true;
    const closed = new Promise<void>((resolve) => res.once('close', () => ((open = false), resolve())));
    let data = first;
    for (let at = start; ;) {
      if (!data.length && at <= end) return void res.destroy(); // the file changed or went away mid-way
      at += data.length;
      if (!res.write(data) && !(await drained(res, closed, config.SPEECH_WRITE_TIMEOUT_SECONDS * 1000)))
        return void res.destroy();
      if (at > end || !open) break;
      data = await piece(at);
    }
    res.end();
  };
}

/**
 * A file still being made (the first request for an encoding), sent as it grows: asked for again
 * at once after a piece, after a growing pause (to its `pollMs`) after none, until its end.
 * No Range and no Content-Length on this one; later requests are served from the finished file.
 */
async function streamDownload(
  req: Request,
  res: Response,
  graphql: GraphQLClient,
  route: RouteSpec,
  config: Config,
  contentType: string,
  stream: NonNullable<NonNullable<RouteSpec['download']>['stream']>,
  variables: Record<string, unknown>,
): Promise<void> {
  const [maxWaitMs, pollMs] = [stream.maxWaitMs(config), stream.pollMs(config)];
  let open = true;
  const closed = new Promise<void>((resolve) => res.once('close', () => ((open = false), resolve())));
  let lastProgress = Date.now();
  for (let offset = 0, wait = 5; open;) {
    const result = await run(graphql, route, req, res, stream.query, {
      ...variables,
      offset,
      length: DOWNLOAD_PIECE_BYTES,
    });
    if (!result) return void (res.headersSent && res.destroy());
    const piece = result.data?.result as { chunk?: string; end?: boolean } | undefined;
    const data = Buffer.from(piece?.chunk ?? '', 'base64');
    if (!res.headersSent) {
      res.status(200);
      res.type(contentType);
      res.setHeader('Cache-Control', 'private, no-cache');
      if (req.method === 'HEAD') return void res.end();
    }
    if (data.length) {
      offset += data.length;
      lastProgress = Date.now();
      wait = 5;
      if (!res.write(data) && !(await drained(res, closed, config.SPEECH_WRITE_TIMEOUT_SECONDS * 1000)))
        return void res.destroy();
    }
    if (piece?.end) return void res.end();
    if (data.length) continue;
    // The encoding failed or stopped (its process went away): cut short, never a wrong "complete" file.
    if (Date.now() - lastProgress > maxWaitMs) return void res.destroy();
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(pollMs, wait * 2);
  }
}
