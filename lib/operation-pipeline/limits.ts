// The pipeline's first step (./pipeline.ts): limits on the shape of a GraphQL operation,
// checked before anything validates or plans it:
// validation (overlapping fields) and query planning grow much faster than the document, so
// a 200 KB anonymous mutation of 4,000 aliases used to hold the event loop for half a minute.
// Everything here is one linear pass over a document of at most GRAPHQL_MAX_TOKENS tokens.
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import {
  ASTVisitor,
  DocumentNode,
  getOperationAST,
  GraphQLError,
  GraphQLSchema,
  Kind,
  OperationDefinitionNode,
  OperationTypeNode,
  parse,
  SelectionSetNode,
  validate,
  ValidationContext,
  ValidationRule,
  ValueNode,
  visit,
} from 'graphql';
import { ComplexityEstimator, getComplexity } from 'graphql-query-complexity';
import type { Config } from '../config';
import { AppError } from '../errors';
import { expensiveField } from '../kit/expensive';
import type { Operation, OperationStep } from './pipeline';

export type LimitsConfig = Pick<
  Config,
  | 'GRAPHQL_MAX_TOKENS'
  | 'GRAPHQL_MAX_DEPTH'
  | 'GRAPHQL_MAX_ALIASES'
  | 'GRAPHQL_MAX_ROOT_FIELDS'
  | 'GRAPHQL_MAX_EXPENSIVE_FIELDS'
  | 'GRAPHQL_MAX_DIRECTIVES'
  | 'GRAPHQL_MAX_COST'
  | 'GRAPHQL_MAX_COST_ANONYMOUS'
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

/**
 * Expensive root fields (searches, neighbours: lib/kit/expensive.ts) in each operation, aliases
 * and fragments included: 20 aliased searches in one request would run 20 searches at once.
 */
function expensiveFieldsRule(max: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const schema = context.getSchema();
    const count = (set: SelectionSetNode, type: string, seen: Set<string>): number => {
      let n = 0;
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) {
          const declared = expensiveField(type, s.name.value);
          if (
            declared &&
            (!declared.whenArgument ||
              s.arguments?.some((a) => a.name.value === declared.whenArgument && a.value.kind !== Kind.NULL))
          )
            n++;
        } else if (s.kind === Kind.INLINE_FRAGMENT) n += count(s.selectionSet, type, seen);
        else if (!seen.has(s.name.value)) {
          seen.add(s.name.value);
          const fragment = context.getFragment(s.name.value);
          if (fragment) n += count(fragment.selectionSet, type, seen);
        }
      }
      return n;
    };
    return {
      OperationDefinition(node: OperationDefinitionNode) {
        const root =
          node.operation === OperationTypeNode.QUERY
            ? schema.getQueryType()
            : node.operation === OperationTypeNode.MUTATION
              ? schema.getMutationType()
              : null;
        if (!root) return;
        const n = count(node.selectionSet, root.name, new Set());
        if (n > max)
          context.reportError(
            refused('expensive field (searches, neighbours)', max, 'GRAPHQL_MAX_EXPENSIVE_FIELDS', n),
          );
      },
    };
  };
}

/** An armor rule that reports our error (naming the setting) instead of throwing its own. */
function armor<O>(
  rule: (options: O) => ValidationRule,
  options: O,
  limit: string,
  value: number,
  variable: string,
): ValidationRule {
  return rule({
    ...options,
    n: value,
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) =>
        context?.reportError(refused(limit, value, variable, /found (\d+)/.exec(error.message)?.[1])),
    ],
  });
}

const PAGE_ARGUMENTS = ['first', 'last', 'limit'];

/**
 * A field costs 1 plus its selection; a field with a page size (`first`, `last`, `limit`, from a
 * literal or a variable) costs its selection once per item. Introspection counts 1 per field
 * (it is off in production; its answer is bounded by the response cap).
 */
const estimator: ComplexityEstimator = ({ field, args, childComplexity }) => {
  if (field.name.startsWith('__')) return 1;
  const page = PAGE_ARGUMENTS.map((a): unknown => args[a]).find((v): v is number => typeof v === 'number' && v > 0);
  return 1 + (page ?? 1) * childComplexity;
};

/** The refusal of a document from which no single operation can be chosen (by `operationName`). */
export function noOperation(document: DocumentNode, name: string | undefined): AppError {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length;
  if (name)
    return new AppError('validation_error', `The document has no operation named "${name}".`, {
      operationName: ['names no operation of the document'],
    });
  if (operations > 1)
    return new AppError(
      'validation_error',
      'The document has several operations: name the one to run in operationName.',
      { operationName: ['is required when the document has several operations'] },
    );
  return new AppError('validation_error', 'The document has no operation to run.');
}

export interface OperationLimits {
  /**
   * The refusal for an operation over a limit, or for one that cannot be run here (no single
   * operation chosen, or of a kind this endpoint does not serve); undefined when it may go on
   * (also when it does not parse: the server's own parser reports that).
   */
  check(
    schema: GraphQLSchema,
    input: OperationInput,
    options: { authenticated: boolean; kinds: readonly OperationTypeNode[] },
  ): AppError | undefined;
}

/** What a document's text says, whatever its variables: kept per schema and text. */
interface Analysis {
  /** Undefined when it does not parse (the server's own parser reports that) or was refused. */
  document?: DocumentNode;
  refusal?: AppError;
  /** Variables whose values can change the cost: page sizes and directive arguments (`@skip(if: $x)`). */
  costVariables: string[];
  /** Costs already computed, by operation name and the values of `costVariables`. */
  costs: Map<string, number | Error>;
}

/**
 * Documents of at most this many characters are remembered (up to ANALYSES_KEPT per schema):
 * clients send the same few operations again and again, and parsing and walking one was a tenth
 * of the CPU of a session read. Longer ones, and the rest, are analysed each time.
 */
const CACHED_QUERY_CHARS = 4096;
const ANALYSES_KEPT = 500;
const COSTS_KEPT = 50;
const TOO_MANY_NODES = /maximum allowed number of nodes/;

/** The variables a document uses in page-size arguments and in directives: all that the cost reads from them. */
function costVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  const collect = (node: ValueNode): void => {
    if (node.kind === Kind.VARIABLE) names.add(node.name.value);
    else if (node.kind === Kind.LIST) node.values.forEach(collect);
    else if (node.kind === Kind.OBJECT) node.fields.forEach((f) => collect(f.value));
  };
  visit(document, {
    Field: (node) => node.arguments?.forEach((a) => PAGE_ARGUMENTS.includes(a.name.value) && collect(a.value)),
    Directive: (node) => node.arguments?.forEach((a) => collect(a.value)),
  });
  return [...names];
}

export function operationLimits(config: LimitsConfig): OperationLimits {
  const rules: ValidationRule[] = [
    armor(maxAliasesRule, {}, 'alias', config.GRAPHQL_MAX_ALIASES, 'GRAPHQL_MAX_ALIASES'),
    armor(maxDepthRule, { ignoreIntrospection: true }, 'depth', config.GRAPHQL_MAX_DEPTH, 'GRAPHQL_MAX_DEPTH'),
    armor(maxDirectivesRule, {}, 'directive', config.GRAPHQL_MAX_DIRECTIVES, 'GRAPHQL_MAX_DIRECTIVES'),
    rootFieldsRule(config.GRAPHQL_MAX_ROOT_FIELDS),
    expensiveFieldsRule(config.GRAPHQL_MAX_EXPENSIVE_FIELDS),
  ];
  const analyses = new WeakMap<GraphQLSchema, Map<string, Analysis>>();

  function analyse(schema: GraphQLSchema, query: string): Analysis {
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: config.GRAPHQL_MAX_TOKENS });
    } catch (err) {
      // graphql-js says "more that N tokens".
      if (/contains more th\w+ \d+ tokens/.test((err as Error).message))
        return {
          refusal: refused('token', config.GRAPHQL_MAX_TOKENS, 'GRAPHQL_MAX_TOKENS'),
          costVariables: [],
          costs: new Map(),
        };
      return { costVariables: [], costs: new Map() };
    }
    const [first] = validate(schema, document, rules);
    if (first)
      return {
        refusal: first instanceof AppError ? first : new AppError('validation_error', first.message),
        costVariables: [],
        costs: new Map(),
      };
    return { document, costVariables: costVariables(document), costs: new Map() };
  }

  function analysed(schema: GraphQLSchema, query: string): Analysis {
    if (query.length > CACHED_QUERY_CHARS) return analyse(schema, query);
    let kept = analyses.get(schema);
    if (!kept) analyses.set(schema, (kept = new Map<string, Analysis>()));
    let analysis = kept.get(query);
    if (!analysis) {
      analysis = analyse(schema, query);
      if (kept.size >= ANALYSES_KEPT) kept.delete(kept.keys().next().value!); // oldest first out
      kept.set(query, analysis);
    }
    return analysis;
  }

  return {
    check(schema, input, { authenticated, kinds }) {
      if (typeof input.query !== 'string') return undefined;
      const analysis = analysed(schema, input.query);
      if (analysis.refusal) return analysis.refusal;
      const document = analysis.document;
      if (!document) return undefined;

      const name = typeof input.operationName === 'string' ? input.operationName : undefined;
      const operation = getOperationAST(document, name);
      if (!operation) return noOperation(document, name);
      if (!kinds.includes(operation.operation)) {
        return new AppError(
          'validation_error',
          operation.operation === OperationTypeNode.SUBSCRIPTION
            ? 'Subscriptions are served at /graphql/stream (GraphQL over SSE), not here.'
            : `${operation.operation[0].toUpperCase()}${operation.operation.slice(1)} operations are not served here; send them to /graphql.`,
        );
      }

      const max = authenticated ? config.GRAPHQL_MAX_COST : config.GRAPHQL_MAX_COST_ANONYMOUS;
      const variables =
        input.variables && typeof input.variables === 'object' ? (input.variables as Record<string, unknown>) : {};
      const costKey = JSON.stringify([name ?? null, ...analysis.costVariables.map((v) => variables[v] ?? null)]);
      let cost = analysis.costs.get(costKey);
      if (cost === undefined) {
        try {
          cost = getComplexity({ schema, query: document, variables, operationName: name, estimators: [estimator] });
        } catch (err) {
          cost = err as Error;
        }
        // Not an error about variables: another request may send the same page sizes with the
        // rest of its variables right, and must have its cost counted.
        if (!(cost instanceof Error) || TOO_MANY_NODES.test(cost.message)) {
          if (analysis.costs.size >= COSTS_KEPT) analysis.costs.delete(analysis.costs.keys().next().value!);
          analysis.costs.set(costKey, cost);
        }
      }
      if (cost instanceof Error) {
        // Fragments spread again and again: too many fields once expanded.
        if (TOO_MANY_NODES.test(cost.message))
          return refused(
            'cost',
            max,
            authenticated ? 'GRAPHQL_MAX_COST' : 'GRAPHQL_MAX_COST_ANONYMOUS',
            'more than 10,000 fields once fragments are expanded',
          );
        return undefined; // variables that do not fit their types: execution refuses them
      }
      if (cost > max)
        return refused(
          authenticated ? 'cost' : 'cost (without a token)',
          max,
          authenticated ? 'GRAPHQL_MAX_COST' : 'GRAPHQL_MAX_COST_ANONYMOUS',
          cost,
        );
      return undefined;
    },
  };
}

/**
 * The step: an operation over a limit is refused before it is validated. `authenticated`: the
 * caller presented a token (the larger cost budget; a token found invalid later is refused then).
 */
export function limitsStep<Caller, Context>(
  limits: OperationLimits,
  authenticated: (op: Operation<Caller, Context>) => boolean,
): OperationStep<Caller, Context> {
  return {
    name: 'limits',
    before(op) {
      if (!op.schema) return;
      const refusal = limits.check(op.schema, op.request, { authenticated: authenticated(op), kinds: op.kinds });
      if (refusal) op.result = { errors: [refusal] };
    },
  };
}
