// How a route becomes its GraphQL operation, from the declarations the OpenAPI document is
// written from: the selection is read off the response schema (each REST field is the GraphQL
// field of its camelCase name, lib/naming.ts, or the one `graphqlField` names), and a body's
// arguments off the request schema (types from the JSON types). So a field is declared once,
// in its module's routes.ts, and test/facade/openapi.test.ts checks every operation against the schema served.
import { camelCase } from '../lib/naming';
import type { RouteInput, RouteSpec } from './route-spec';
import type { JsonSchema } from './schemas';

/** One argument of the root field: its GraphQL type and where its value comes from (undefined: left out). */
export interface Arg {
  type: string;
  value: (input: RouteInput) => unknown;
}

export interface GraphQLCall {
  kind: 'query' | 'mutation' | 'subscription';
  /** The root field, answered under the alias `result`. */
  field: string;
  args?: Record<string, Arg>;
  /** What to read: a response schema (its fields, nested ones too), or a selection set as written. Default: the route's response. */
  select?: JsonSchema | string;
  /**
   * More root fields of the same operation, with the same arguments and selection, each answered
   * under its own name: one operation the gateway answers from several subgraphs (the trash's
   * parts). The route's `present` then receives `{ result, <field>… }`.
   */
  also?: string[];
}

const GRAPHQL_NAME = 'x-graphql';

/** A REST field read from a GraphQL field whose name is not the camelCase of its own (e.g. `session_id` from `id`). */
export const graphqlField = (name: string, schema: JsonSchema): JsonSchema => ({ ...schema, [GRAPHQL_NAME]: name });

/** The GraphQL name of a REST field. */
const graphqlName = (restName: string, schema: JsonSchema) =>
  (schema[GRAPHQL_NAME] as string | undefined) ?? camelCase(restName);

/** The object schema a field's value is made of, when it is one (or a list of them). */
function objectOf(schema: JsonSchema): JsonSchema | undefined {
  if (schema.properties) return schema;
  const items = schema.items as JsonSchema | undefined;
  return schema.type === 'array' && items?.properties ? items : undefined;
}

/** `{ id base_voice: baseVoice items { … } }`: every field of the schema, aliased to its REST name. */
export function selection(schema: JsonSchema): string {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties) throw new Error('A selection is read from an object schema with properties.');
  const fields = Object.entries(properties).map(([rest, field]) => {
    const name = graphqlName(rest, field);
    const head = name === rest ? rest : `${rest}: ${name}`;
    const inner = objectOf(field);
    return inner ? `${head} ${selection(inner)}` : head;
  });
  return `{ ${fields.join(' ')} }`;
}

/** The GraphQL type of a JSON schema (`x-graphql-type` where the JSON type does not tell, e.g. an enum). */
function graphqlType(schema: JsonSchema, required: boolean): string {
  const named = (): string => {
    if (schema['x-graphql-type']) return schema['x-graphql-type'] as string;
    if (schema.type === 'array') return `[${graphqlType(schema.items as JsonSchema, true)}]`;
    if (schema.format === 'uuid') return 'ID';
    const scalar = (
      { string: 'String', integer: 'Int', number: 'Float', boolean: 'Boolean' } as Record<string, string>
    )[schema.type as string];
    if (!scalar) throw new Error(`No GraphQL type for ${JSON.stringify(schema)}`);
    return scalar;
  };
  return required ? `${named()}!` : named();
}

/** The arguments a request body carries: one per property, named in camelCase, only those the body has (null included). */
export function bodyArgs(schema: JsonSchema): Record<string, Arg> {
  const required = (schema.required as string[] | undefined) ?? [];
  return Object.fromEntries(
    Object.entries(schema.properties as Record<string, JsonSchema>).map(([rest, field]) => [
      graphqlName(rest, field),
      {
        type: graphqlType(field, required.includes(rest)),
        value: ({ body }: RouteInput) => (Object.hasOwn(body, rest) ? body[rest] : undefined),
      },
    ]),
  );
}

/** An argument taken from a path parameter. */
export const pathArg = (param: string, type = 'ID!'): Arg => ({ type, value: ({ params }) => params[param] });

/** An argument taken from a query parameter. */
export const queryArg = (param: string, type: string): Arg => ({ type, value: ({ query }) => query[param] });

/** The operation a route runs and its variables, built once per route. */
export function graphqlOperation(route: Pick<RouteSpec, 'operationId' | 'graphql' | 'response'>): {
  query: string;
  variables: (input: RouteInput) => Record<string, unknown>;
} {
  const { kind, field, args = {}, select = route.response, also = [] } = route.graphql;
  const name = route.operationId[0].toUpperCase() + route.operationId.slice(1);
  const entries = Object.entries(args);
  const declared = entries.length ? `(${entries.map(([arg, { type }]) => `$${arg}: ${type}`).join(', ')})` : '';
  const passed = entries.length ? `(${entries.map(([arg]) => `${arg}: $${arg}`).join(', ')})` : '';
  const selected = typeof select === 'string' ? select : selection(select);
  return {
    query: `${kind} ${name}${declared} { result: ${field}${passed} ${selected}${also.map((f) => ` ${f}: ${f}${passed} ${selected}`).join('')} }`,
    // Left-out values are left out: a variable that is absent keeps the argument's default (or "unchanged", for updates).
    variables: (input) =>
      Object.fromEntries(entries.map(([arg, { value }]) => [arg, value(input)]).filter(([, v]) => v !== undefined)),
  };
}
