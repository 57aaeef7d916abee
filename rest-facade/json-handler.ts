// The ordinary route: one GraphQL operation (a text one for `?format=` when declared), its answer
// shaped as JSON; an expensive one refused early when its caller's slots are all taken.
import type { Request, Response } from 'express';
import { sendJson } from '../lib/http-app';
import type { ExpensiveGate } from '../lib/kit/expensive';
import { snakeKeys } from '../lib/naming';
import type { GraphQLClient } from './graphql-client';
import { graphqlOperation } from './graphql-mapping';
import { routeInput, run } from './route-call';
import { carriesCredentials, NO_STORE_HEADERS, RouteSpec } from './route-spec';
import { sendError } from './errors';
import { compileValidator } from './validation';

/**
 * The early refusal of an expensive route (lib/kit/expensive.ts): a caller whose token this
 * process has verified before and whose slots are all taken gets 429 at once, before the
 * request's input is checked or its operation parsed, planned or run. A refusal costs the least
 * it can, since a caller at full rate sends little else; the gate still refuses in the
 * operation (distributed, or for a token not seen before).
 */
function refusedEarly(route: RouteSpec, graphql: GraphQLClient, gate: ExpensiveGate, req: Request, res: Response) {
  const expensive = route.expensive;
  if (!expensive || !graphql.knownUser) return false;
  if (expensive.whenQuery !== undefined) {
    const given = req.query[expensive.whenQuery];
    if (given === undefined || given === '') return false;
  }
  const userId = graphql.knownUser(req.headers.authorization);
  const refusal = userId ? gate.refusal(userId, expensive.kind) : undefined;
  if (!refusal) return false;
  void gate
    .holdRefusal()
    .then(() => sendError(res, 'rate_limit_exceeded', refusal.message, snakeKeys(refusal.details), refusal.retryAfter));
  return true;
}

export function routeHandler(route: RouteSpec, graphql: GraphQLClient, gate: ExpensiveGate) {
  const validate = compileValidator(route);
  const operation = graphqlOperation(route);
  const textOperation = route.text
    ? graphqlOperation({
        ...route,
        operationId: `${route.operationId}Text`,
        graphql: { ...route.graphql, field: route.text.field, select: '' },
      })
    : undefined;
  return async (req: Request, res: Response) => {
    if (refusedEarly(route, graphql, gate, req, res)) return;
    const input = routeInput(route, validate, req, res);
    if (!input) return;
    if (textOperation && input.query[route.text!.param] === route.text!.value) {
      const text = await run(graphql, route, req, res, textOperation.query, textOperation.variables(input));
      if (!text) return;
      return void res
        .status(200)
        .type(route.text!.contentType)
        .send(String(text.data?.result ?? ''));
    }
    const result = await run(graphql, route, req, res, operation.query, operation.variables(input));
    if (!result) return;
    const data = route.graphql.also ? result.data : result.data?.result;
    if (data == null) return sendError(res, 'not_found');
    if (route.location) res.location(route.location(data, input));
    if (route.etag) {
      res.setHeader('ETag', route.etag(data));
      res.status(route.status);
      if (req.fresh) return void res.status(304).end(); // If-None-Match names this version
    }
    if (carriesCredentials(route)) res.set(NO_STORE_HEADERS);
    const body = route.ack ? { id: data.id, message: route.ack } : route.present ? route.present(data, input) : data;
    sendJson(res, route.status, body instanceof Promise ? await body : body);
  };
}
