// Limits on the shape of a GraphQL operation, checked before Apollo validates and plans it:
// validation (overlapping fields) and query planning grow much faster than the document, so
// a 200 KB anonymous mutation of 4,000 aliases used to hold the event loop for half a minute.
// Everything here is one linear pass over a document of at most GRAPHQL_MAX_TOKENS tokens.
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import {
  ASTVisitor, DocumentNode, getOperationAST, GraphQLError, GraphQLSchema, Kind, OperationDefinitionNode, OperationTypeNode, parse,
  SelectionSetNode, validate, ValidationContext, ValidationRule,
} from 'graphql';
import { ComplexityEstimator, getComplexity } from 'graphql-query-complexity';
import type { Config } from '../lib/config';
import { AppError } from '../lib/errors';

export type LimitsConfig = Pick<
  Config,
  'GRAPHQL_MAX_TOKENS' | 'GRAPHQL_MAX_DEPTH' | 'GRAPHQL_MAX_ALIASES' | 'GRAPHQL_MAX_ROOT_FIELDS' | 'GRAPHQL_MAX_DIRECTIVES' | 'GRAPHQL_MAX_COST' | 'GRAPHQL_MAX_COST_ANONYMOUS'
>;

export interface OperationInput {
  query: unknown;
  variables?: unknown;
  operationName?: unknown;
}

const refused = (limit: string, value: number, variable: string, found?: number | string) =>
  new AppError(
    'validation_error',
    `The operation exceeds the ${limit} limit of ${value} (${variable})${found !== undefined ? `: it has ${found}` : ''}.`,
    { limit: variable, max: value },
  );

/** Fields selected at the root of each operation, through fragments (no package counts these). */
function rootFieldsRule(max: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const count = (set: SelectionSetNode, seen: Set<string>): number => {
      let n = 0;
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) n += s.name.value === '__typename' ? 0 : 1;
        else if (s.kind === Kind.INLINE_FRAGMENT) n += count(s.selectionSet, seen);
        else if (!seen.has(s.name.value)) {
          seen.add(s.name.value);
          const fragment = context.getFragment(s.name.value);
          if (fragment) n += count(fragment.selectionSet, seen);
        }
      }
      return n;
    };
    return {
      OperationDefinition(node: OperationDefinitionNode) {
        const n = count(node.selectionSet, new Set());
        if (n > max) context.reportError(refused('root field', max, 'GRAPHQL_MAX_ROOT_FIELDS', n));
      },
    };
  };
}

/** An armor rule that reports our error (naming the setting) instead of throwing its own. */
function armor<O>(rule: (options: O) => ValidationRule, options: O, limit: string, value: number, variable: string): ValidationRule {
  return rule({
    ...options,
    n: value,
    propagateOnRejection: false,
    onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(refused(limit, value, variable, /found (\d+)/.exec(error.message)?.[1]))],
  } as O);
}

const PAGE_ARGUMENTS = ['first', 'last', 'limit'];

/**
 * A field costs 1 plus its selection; a field with a page size (`first`, `last`, `limit`, from a
 * literal or a variable) costs its selection once per item. Introspection counts 1 per field
 * (it is off in production; its answer is bounded by the response cap).
 */
const estimator: ComplexityEstimator = ({ field, args, childComplexity }) => {
  if (field.name.startsWith('__')) return 1;
  const page = PAGE_ARGUMENTS.map((a) => args[a]).find((v) => typeof v === 'number' && v > 0) as number | undefined;
  return 1 + (page ?? 1) * childComplexity;
};

export interface OperationLimits {
  /**
   * The refusal for an operation over a limit, or for one that cannot be run here (no single
   * operation chosen, or of a kind this endpoint does not serve); undefined when it may go on
   * (also when it does not parse: the server's own parser reports that).
   */
  check(schema: GraphQLSchema, input: OperationInput, options: { authenticated: boolean; kinds: OperationTypeNode[] }): AppError | undefined;
}

export function operationLimits(config: LimitsConfig): OperationLimits {
  const rules: ValidationRule[] = [
    armor(maxAliasesRule, {}, 'alias', config.GRAPHQL_MAX_ALIASES, 'GRAPHQL_MAX_ALIASES'),
    armor(maxDepthRule, { ignoreIntrospection: true }, 'depth', config.GRAPHQL_MAX_DEPTH, 'GRAPHQL_MAX_DEPTH'),
    armor(maxDirectivesRule, {}, 'directive', config.GRAPHQL_MAX_DIRECTIVES, 'GRAPHQL_MAX_DIRECTIVES'),
    rootFieldsRule(config.GRAPHQL_MAX_ROOT_FIELDS),
  ];
  return {
    check(schema, input, { authenticated, kinds }) {
      if (typeof input.query !== 'string') return undefined;
      let document: DocumentNode;
      try {
        document = parse(input.query, { maxTokens: config.GRAPHQL_MAX_TOKENS });
      } catch (err) {
        // graphql-js says "more that N tokens".
        if (/contains more th\w+ \d+ tokens/.test((err as Error).message)) return refused('token', config.GRAPHQL_MAX_TOKENS, 'GRAPHQL_MAX_TOKENS');
        return undefined;
      }
      const [first] = validate(schema, document, rules);
      if (first) return first instanceof AppError ? first : new AppError('validation_error', first.message);

      const name = typeof input.operationName === 'string' ? input.operationName : undefined;
      const operation = getOperationAST(document, name);
      if (!operation) {
        const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length;
        if (name) return new AppError('validation_error', `The document has no operation named "${name}".`, { operationName: ['names no operation of the document'] });
        if (operations > 1) return new AppError('validation_error', 'The document has several operations: name the one to run in operationName.', { operationName: ['is required when the document has several operations'] });
        return new AppError('validation_error', 'The document has no operation to run.');
      }
      if (!kinds.includes(operation.operation)) {
        return new AppError(
          'validation_error',
          operation.operation === OperationTypeNode.SUBSCRIPTION
            ? 'Subscriptions are served at /graphql/stream (GraphQL over SSE), not here.'
            : `${operation.operation[0].toUpperCase()}${operation.operation.slice(1)} operations are not served here; send them to /graphql.`,
        );
      }

      const max = authenticated ? config.GRAPHQL_MAX_COST : config.GRAPHQL_MAX_COST_ANONYMOUS;
      let cost: number;
      try {
        const variables = input.variables && typeof input.variables === 'object' ? (input.variables as Record<string, unknown>) : {};
        cost = getComplexity({ schema, query: document, variables, operationName: name, estimators: [estimator] });
      } catch (err) {
        // Fragments spread again and again: too many fields once expanded.
        if (/maximum allowed number of nodes/.test((err as Error).message)) return refused('cost', max, authenticated ? 'GRAPHQL_MAX_COST' : 'GRAPHQL_MAX_COST_ANONYMOUS', 'more than 10,000 fields once fragments are expanded');
        return undefined; // variables that do not fit their types: execution refuses them
      }
      if (cost > max) return refused(authenticated ? 'cost' : 'cost (without a token)', max, authenticated ? 'GRAPHQL_MAX_COST' : 'GRAPHQL_MAX_COST_ANONYMOUS', cost);
      return undefined;
    },
  };
}
