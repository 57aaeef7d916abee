// What every kind of route does around its GraphQL operations: the checks before the first one
// (a token, valid input) and running one with the caller's headers, failures sent as error objects.
import type { Request, Response } from 'express';
import { IDEMPOTENCY_KEY_HEADER, REQUEST_ID_HEADER } from '../lib/request-context';
import type { GraphQLClient } from './graphql-client';
import type { RouteInput, RouteSpec } from './route-spec';
import { sendError, sendGraphQLError } from './errors';
import type { compileValidator } from './validation';

/** The checks every route makes before its operation runs: the token is there, the input valid. */
export function routeInput(
  route: RouteSpec,
  validate: ReturnType<typeof compileValidator>,
  req: Request,
  res: Response,
): RouteInput | undefined {
  // A stream may be opened with a ticket in the URL instead (browsers' EventSource sends no header).
  if (route.auth && !req.headers.authorization && !(route.stream && typeof req.query.ticket === 'string')) {
    sendError(res, 'unauthorized', 'A Bearer access token is required.');
    return undefined;
  }
  const input: RouteInput = {
    params: { ...req.params } as Record<string, string>,
    query: { ...req.query },
    body: req.body,
    headers: req.headers,
  };
  const problems = validate(input) ?? route.check?.(input);
  if (problems) {
    sendError(res, 'validation_error', 'The request is invalid.', problems);
    return undefined;
  }
  return input;
}

/** Runs one operation for the request; sends the error object and answers undefined when it failed. */
export async function run(
  graphql: GraphQLClient,
  route: RouteSpec,
  req: Request,
  res: Response,
  query: string,
  variables: Record<string, unknown>,
) {
  let result;
  try {
    result = await graphql.execute({
      query,
      variables,
      headers: {
        [REQUEST_ID_HEADER]: req.headers[REQUEST_ID_HEADER],
        'user-agent': req.headers['user-agent'],
        ...(route.auth ? { authorization: req.headers.authorization } : {}),
        // Commands honour Idempotency-Key (lib/idempotency.ts, in the gateway's pipeline).
        ...(route.method === 'post' && !route.upload && req.headers[IDEMPOTENCY_KEY_HEADER] !== undefined
          ? { [IDEMPOTENCY_KEY_HEADER]: req.headers[IDEMPOTENCY_KEY_HEADER] }
          : {}),
      },
      clientIp: req.ip ?? '',
    });
  } catch (err) {
    req.log.error({ err }, 'gateway unreachable');
    sendError(res, 'service_unavailable');
    return undefined;
  }
  if (result.errors?.length) {
    sendGraphQLError(res, result.errors);
    return undefined;
  }
  return result;
}
