// The pieces route declarations share: paging, the id in the path, the expected version of a
// write. Imported by each module's routes (subgraphs/<name>/routes.ts),
// so a rule such as "?version or If-Match" is written once.
import { Arg, queryArg } from './graphql-mapping';
import type { RouteInput, RouteSpec } from './route-spec';
import type { JsonSchema } from './schemas';
import { pathArg } from './graphql-mapping';

/** `If-Match: "3"` (or a bare 3): the version a conditional write expects; undefined when absent, NaN when malformed. */
export function ifMatchVersion(headers: RouteInput['headers']): number | undefined {
  const value = headers['if-match'];
  if (value === undefined) return undefined;
  const m = /^\s*"?(\d{1,10})"?\s*$/.exec(Array.isArray(value) ? value.join(',') : value);
  return m ? Number(m[1]) : NaN;
}

/** The expected version of a voice write: `?version=N` or `If-Match: "N"`, one of them, agreeing when both. */
export function checkVersion({ query, headers }: RouteInput): Record<string, string[]> | null {
  const fromHeader = ifMatchVersion(headers);
  if (fromHeader !== undefined && !(fromHeader >= 1 && fromHeader <= 2147483647))
    return { if_match: ['must be a version in quotes, e.g. "3"'] };
  if (query.version === undefined && fromHeader === undefined)
    return { version: ['is required (as ?version=N or If-Match: "N")'] };
  if (query.version !== undefined && fromHeader !== undefined && query.version !== fromHeader)
    return { version: ['differs from If-Match'] };
  return null;
}

/** The page size bound of every list field (lib/paging.ts's, not imported: that module loads type-graphql; a test compares them). */
export const MAX_PAGE_SIZE = 100;

/** The paging query of every list: `limit` and the previous page's `next_cursor`, with a list's own filters beside them. */
export const pageQuery = (filters: Record<string, JsonSchema> = {}): NonNullable<RouteSpec['query']> => ({
  schema: {
    type: 'object',
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 20, description: 'Page size' },
      cursor: {
        type: 'string',
        maxLength: 200,
        'x-opaque': 'next_cursor',
        description: 'next_cursor of the previous page, as handed out (opaque; anything else is a validation_error)',
      },
      ...filters,
    },
  },
});
export const PAGE_QUERY = pageQuery();
/** The paging arguments of every list field; a left-out limit takes GraphQL's default page size. */
export const PAGE_ARGS: Record<string, Arg> = { first: queryArg('limit', 'Int'), after: queryArg('cursor', 'String') };

/** The id of the resource in the path, as the `id` argument. */
export const idFrom = (param: string) => ({ id: pathArg(param) });
/** `?version=N`, which deletes require. */
export const VERSION_QUERY = {
  schema: { type: 'object', properties: { version: { type: 'integer', minimum: 1, maximum: 2147483647 } } },
  required: ['version'],
};

/** A conditional write (PATCH): the version as `?version=N` or `If-Match: "N"`, documented and checked. */
export const EXPECTED_VERSION: Pick<RouteSpec, 'query' | 'headerParams' | 'check'> = {
  query: {
    schema: {
      type: 'object',
      properties: { version: { type: 'integer', minimum: 1, maximum: 2147483647, description: 'Or If-Match' } },
    },
  },
  headerParams: [
    {
      name: 'If-Match',
      schema: { type: 'string', pattern: '^\\s*"?[1-9][0-9]{0,8}"?\\s*$', example: '"3"' },
      description: 'The version you expect, quoted (the ETag of GET); instead of ?version',
    },
  ],
  check: checkVersion,
};

/** The `version` argument of a conditional write, from `?version` or `If-Match`. */
export const EXPECTED_VERSION_ARG: Arg = {
  type: 'Int!',
  value: ({ query, headers }) => query.version ?? ifMatchVersion(headers),
};
