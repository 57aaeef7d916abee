// One schema for clients: Apollo's gateway does not federate subscriptions, so the event
// stream's schema (gateway/events.ts, served at /graphql/stream) lives beside the supergraph.
// This wraps the gateway so that /graphql's schema, and so its introspection, also shows what
// is served beside it (Subscription.events, Event, Query.eventStreamPosition): codegen tools and
// the explorer see one schema. Introspection is answered from that joined schema; queries of
// the fields beside run there; subscriptions are refused with a pointer to /graphql/stream.
import type { GatewayInterface, GatewayExecutor } from '@apollo/server-gateway-interface';
import {
  DocumentNode,
  execute,
  ExecutionResult,
  extendSchema,
  GraphQLError,
  GraphQLFormattedError,
  GraphQLNamedType,
  GraphQLSchema,
  isIntrospectionType,
  isSpecifiedScalarType,
  Kind,
  OperationTypeNode,
  parse,
  printType,
  SelectionSetNode,
} from 'graphql';
import { AppError } from '../lib/errors';
import type { Headers } from '../lib/request-context';

export interface ServedBeside {
  schema: GraphQLSchema;
  query(request: {
    query: string;
    variables?: Record<string, unknown>;
    operationName?: string;
    headers: Headers;
  }): Promise<{
    data?: Record<string, unknown> | null;
    errors?: readonly (GraphQLError | GraphQLFormattedError)[];
  }>;
}

const INTROSPECTION = new Set(['__schema', '__type', '__typename']);

/** The names of an operation's root fields, through fragments. */
function rootFields(selectionSet: SelectionSetNode, document: DocumentNode, into = new Set<string>()): Set<string> {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) into.add(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT) rootFields(selection.selectionSet, document, into);
    else {
      const fragment = document.definitions.find(
        (d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value,
      );
      if (fragment && fragment.kind === Kind.FRAGMENT_DEFINITION) rootFields(fragment.selectionSet, document, into);
    }
  }
  return into;
}

/** The SDL that adds `beside`'s root fields and the types they need to `api` (types it has already are left as they are). */
function extension(api: GraphQLSchema, beside: GraphQLSchema): DocumentNode {
  const own = (t: GraphQLNamedType) =>
    !isIntrospectionType(t) && !isSpecifiedScalarType(t) && !['Query', 'Mutation', 'Subscription'].includes(t.name);
  const types = Object.values(beside.getTypeMap())
    .filter((t) => own(t) && !api.getType(t.name))
    .map((t) => printType(t));
  const rootType = (t: GraphQLNamedType | null | undefined, existing: unknown) => {
    if (!t) return '';
    const block = printType(t).replace(/^type \w+/, '');
    return existing ? `extend type ${t.name}${block}` : `type ${t.name}${block}`;
  };
  const subscription = beside.getSubscriptionType();
  return parse(
    [
      ...types,
      rootType(beside.getQueryType(), api.getQueryType()),
      rootType(subscription, api.getSubscriptionType()),
      subscription && !api.getSubscriptionType() ? `extend schema { subscription: ${subscription.name} }` : '',
    ].join('\n'),
  );
}

const refusal = (message: string): ExecutionResult => ({ errors: [new AppError('validation_error', message)] });

export function withSchemaBeside(gateway: GatewayInterface, beside: ServedBeside): GatewayInterface {
  let joined: GraphQLSchema | undefined;
  const join = (api: GraphQLSchema) => (joined = extendSchema(api, extension(api, beside.schema)));
  const besideQueries = new Set(Object.keys(beside.schema.getQueryType()?.getFields() ?? {}));

  return {
    onSchemaLoadOrUpdate: (callback) =>
      gateway.onSchemaLoadOrUpdate((s) => callback({ ...s, apiSchema: join(s.apiSchema) })),
    stop: () => gateway.stop(),
    async load(options) {
      const { executor } = await gateway.load(options);
      if (!executor) throw new Error('The gateway loaded without an executor.');
      const wrapped: GatewayExecutor = async (requestContext) => {
        const operation = requestContext.operation;
        const { document, request } = requestContext;
        if (operation.operation === OperationTypeNode.SUBSCRIPTION) {
          return refusal(
            'Subscriptions are served over GraphQL-over-SSE at /graphql/stream (POST, or GET with ?query=; a browser passes ?ticket=).',
          );
        }
        const fields = rootFields(operation.selectionSet, document);
        if (operation.operation === OperationTypeNode.QUERY && [...fields].every((f) => INTROSPECTION.has(f))) {
          // The gateway would answer from the supergraph alone.
          return execute({
            schema: joined!,
            document,
            operationName: request.operationName,
            variableValues: request.variables,
          }) as ExecutionResult;
        }
        const fromBeside = [...fields].filter((f) => besideQueries.has(f));
        if (fromBeside.length) {
          if (![...fields].every((f) => besideQueries.has(f) || f === '__typename')) {
            return refusal(
              `${fromBeside.join(', ')} cannot be asked together with fields of the supergraph; ask in an operation of its own.`,
            );
          }
          const authorization = (requestContext.context as { authorization?: string }).authorization;
          const result = await beside.query({
            query: requestContext.source,
            variables: request.variables,
            operationName: request.operationName,
            headers: { authorization },
          });
          // Apollo takes GraphQLErrors from an executor, not their JSON form.
          const errors = result.errors?.map((e) =>
            e instanceof GraphQLError ? e : new GraphQLError(e.message, { path: e.path, extensions: e.extensions }),
          );
          return { data: result.data, ...(errors ? { errors } : {}) };
        }
        return executor(requestContext);
      };
      return { executor: wrapped };
    },
  };
}
