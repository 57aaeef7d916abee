// A route that serves a subscription (route.stream) as Server-Sent Events.
import type { Request, Response } from 'express';
import type { Config } from '../lib/config';
import { REQUEST_ID_HEADER, STREAM_TICKET_HEADER } from '../lib/request-context';
import type { GraphQLClient, GraphQLResult } from './graphql-client';
import { graphqlOperation } from './graphql-mapping';
import { routeInput } from './route-call';
import type { RouteSpec } from './route-spec';
import { sendError, sendGraphQLError } from './errors';
import { drained } from './slow-reader';
import { compileValidator } from './validation';

// A result shared by many streams (see gateway/events.ts) is turned into its frame once.
const frames = new WeakMap<object, string>();
function frameText(route: RouteSpec, result: GraphQLResult): string {
  let text = frames.get(result);
  if (text === undefined) {
    const frame = route.stream!.frame(result.data!.result);
    text = `id: ${frame.id}\nevent: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
    frames.set(result, text);
  }
  return text;
}

/**
 * A subscription as Server-Sent Events. Errors before the stream starts are ordinary error
 * objects with their status; once it runs, each result is a frame, written only as fast as the
 * client reads: a client that has taken nothing for two heartbeat periods is cut off.
 */
export function streamHandler(route: RouteSpec, graphql: GraphQLClient, config: Config) {
  const validate = compileValidator(route);
  const operation = graphqlOperation(route);
  return async (req: Request, res: Response) => {
    const input = routeInput(route, validate, req, res);
    if (!input) return;
    let results;
    try {
      results = await graphql.subscribe({
        query: operation.query,
        variables: operation.variables(input),
        headers: {
          [REQUEST_ID_HEADER]: req.headers[REQUEST_ID_HEADER],
          authorization: req.headers.authorization,
          [STREAM_TICKET_HEADER]: typeof input.query.ticket === 'string' ? input.query.ticket : undefined,
        },
      });
    } catch (err) {
      req.log.error({ err }, 'gateway unreachable');
      return sendError(res, 'service_unavailable');
    }
    if (!(Symbol.asyncIterator in results)) return sendGraphQLError(res, results.errors ?? []);

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no'); // proxies must not hold frames back
    res.flushHeaders();
    res.write('retry: 2000\n\n');
    const stallMs = 2 * config.EVENT_HEARTBEAT_SECONDS * 1000;
    // Not once ended: a stopping server ends the stream itself (lib/http-server.ts).
    const heartbeat = setInterval(
      () => res.writableEnded || res.write(': keep-alive\n\n'),
      config.EVENT_HEARTBEAT_SECONDS * 1000,
    );
    let open = true;
    const closed = new Promise<void>((resolve) =>
      res.once('close', () => {
        open = false;
        resolve();
        void results.return?.(undefined);
      }),
    );
    try {
      for await (const result of results) {
        if (!open || res.writableEnded) break;
        if (result.errors?.length) {
          const e = result.errors[0];
          res.write(
            `event: error\ndata: ${JSON.stringify({ error: e.extensions?.code ?? 'internal_error', message: e.message })}\n\n`,
          );
          break;
        }
        const text = frameText(route, result);
        if (!res.write(text) && !(await drained(res, closed, stallMs))) {
          // It stopped reading: cut it off (it resumes with Last-Event-ID when it comes back).
          res.destroy();
          break;
        }
      }
    } catch (err) {
      req.log.error({ err }, 'event stream failed');
    } finally {
      clearInterval(heartbeat);
      if (open && !res.writableEnded) res.end();
    }
  };
}
