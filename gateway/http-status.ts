// HTTP statuses of /graphql answers, as GraphQL-over-HTTP recommends:
// - a client that asks for `application/json` (the legacy media type) gets 200 for a
//   well-formed request whatever its GraphQL errors (parse, validation, variables), since such
//   clients read errors from the body; `application/graphql-response+json`, `*/*` or no Accept
//   keeps 400 (and the operation limits' "over a limit → 400" holds for them);
// - `unauthorized` is 401 with `WWW-Authenticate: Bearer` whether the token was refused by the
//   gateway (bad signature, expired) or by a subgraph (its session ended), as on REST.
import type { ApolloServerPlugin } from '@apollo/server';
import Negotiator from 'negotiator';
import { ERROR_STATUS, errorHeaders } from '../lib/errors';

/** The client explicitly prefers `application/json` to `application/graphql-response+json`. */
export function asksForLegacyJson(accept: string | undefined): boolean {
  if (!accept || !/application\/json/i.test(accept)) return false;
  return (
    new Negotiator({ headers: { accept } }).mediaType(['application/graphql-response+json', 'application/json']) ===
    'application/json'
  );
}

export function httpStatusPlugin(): ApolloServerPlugin {
  return {
    async requestDidStart({ request }) {
      const legacy = asksForLegacyJson(request.http?.headers.get('accept'));
      return {
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single') return;
          const { errors, data } = response.body.singleResult;
          if (!errors?.length) return;
          if (errors.some((e) => e.extensions?.code === 'unauthorized')) {
            response.http.status = ERROR_STATUS.unauthorized;
            for (const [name, value] of Object.entries(errorHeaders('unauthorized')))
              response.http.headers.set(name, value);
            return;
          }
          if (legacy && data === undefined && response.http.status === 400) response.http.status = 200;
        },
      };
    },
  };
}
