// A route whose body is a raw file (route.upload), streamed through GraphQL a piece at a time.
import type { Request, Response } from 'express';
import type { Config } from '../lib/config';
import { AppError } from '../lib/errors';
import { sendJson } from '../lib/http-app';
import { bodyCaller, largeBodyAdmission } from '../lib/large-bodies';
import type { GraphQLClient } from './graphql-client';
import { graphqlOperation } from './graphql-mapping';
import { routeInput, run } from './route-call';
import type { RouteSpec } from './route-spec';
import { sendError } from './errors';
import { compileValidator } from './validation';

/** The bytes of one upload piece sent to GraphQL (base64 in a JSON body, under LARGE_BODY_BYTES). */
const UPLOAD_PIECE_BYTES = 512 * 1024;

/**
 * A raw body streamed through GraphQL a piece at a time (route.upload): never more than a piece
 * or two in memory, whatever its size. A Content-Length past the limit is 413 before any byte is
 * read; a chunked body is cut off (and what was received given up) as soon as it passes it. Each
 * upload in flight counts as one large body of its caller (LARGE_BODIES_PER_USER, lib/large-bodies.ts).
 */
export function uploadHandler(route: RouteSpec, graphql: GraphQLClient, config: Config) {
  const validate = compileValidator(route);
  const begin = graphqlOperation({ ...route, graphql: { ...route.graphql, select: '{ id }' } });
  const { append, finish, abort, maxBytes } = route.upload!;
  const name = route.operationId[0].toUpperCase() + route.operationId.slice(1);
  const appendQuery = `mutation ${name}Append($id: ID!, $offset: Float!, $chunk: String!) { result: ${append}(id: $id, offset: $offset, chunk: $chunk) }`;
  const finishQuery = graphqlOperation({
    operationId: `${route.operationId}Finish`,
    graphql: { kind: 'mutation', field: finish, args: { id: { type: 'ID!', value: (i) => i.params.id } } },
    response: route.response,
  }).query;
  const abortQuery = `mutation ${name}Abort($id: ID!) { result: ${abort}(id: $id) }`;
  return async (req: Request, res: Response) => {
    const max = config[maxBytes];
    const tooLarge = () =>
      sendError(res, 'payload_too_large', `The file is larger than ${max} bytes.`, { limit: maxBytes, max });
    const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
    if (declared !== undefined && declared > max) {
      res.setHeader('Connection', 'close');
      return tooLarge();
    }
    const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity')
      return sendError(res, 'unsupported_media_type', 'Send the file as it is, without Content-Encoding.', {
        content_encoding: ['must be identity'],
      });
    req.body = {};
    const input = routeInput(route, validate, req, res);
    if (!input) return;
    const admitted = largeBodyAdmission(config).admit(bodyCaller(req), UPLOAD_PIECE_BYTES);
    if (admitted instanceof AppError)
      return sendError(res, admitted.code, admitted.message, admitted.details, admitted.retryAfter);
    res.once('close', admitted);
    const started = await run(graphql, route, req, res, begin.query, begin.variables(input));
    if (!started) return;
    const id = String((started.data!.result as { id: string }).id);
    let offset = 0;
    let ok = false;
    const send = async (piece: Buffer) => {
      const r = await run(graphql, route, req, res, appendQuery, { id, offset, chunk: piece.toString('base64') });
      if (!r) return false;
      offset += piece.length;
      return true;
    };
    try {
      let pending: Buffer[] = [];
      let size = 0;
      for await (const data of req as AsyncIterable<Buffer>) {
        if (offset + size + data.length > max) {
          res.setHeader('Connection', 'close');
          tooLarge();
          return;
        }
        pending.push(data);
        size += data.length;
        while (size >= UPLOAD_PIECE_BYTES) {
          const all = Buffer.concat(pending);
          if (!(await send(all.subarray(0, UPLOAD_PIECE_BYTES)))) return;
          pending = [all.subarray(UPLOAD_PIECE_BYTES)];
          size = pending[0].length;
        }
      }
      if (size && !(await send(Buffer.concat(pending)))) return;
      const result = await run(graphql, route, req, res, finishQuery, { id });
      if (!result) return;
      ok = true;
      const data = result.data!.result as Record<string, unknown>;
      if (route.location) res.location(route.location(data, input));
      const body = route.present ? route.present(data, input) : data;
      sendJson(res, route.status, body instanceof Promise ? await body : body);
    } catch (err) {
      // The client went away mid-body (or its body broke off): nothing to answer.
      req.log?.info({ err }, 'upload broke off');
      if (!res.headersSent)
        sendError(res, 'validation_error', 'The request body broke off.', { body: ['is incomplete'] });
    } finally {
      // Given up: its pieces go (nothing half-written stays).
      if (!ok)
        await graphql
          .execute({
            query: abortQuery,
            variables: { id },
            headers: { authorization: req.headers.authorization },
            clientIp: req.ip ?? '',
          })
          .catch(() => undefined);
    }
  };
}
