// The pipeline's scope step (issue 30): every field the operation selects declares what it needs
// in the subgraph's own schema (Federation's @authenticated / @requiresScopes, lib/scopes.ts),
// and this step checks the caller against all of them before anything runs. One refusal refuses
// the operation: a mutation never half runs because a sibling field was out of reach. Each field
// out of reach is named by its own error (its path): `unauthorized` without a valid token,
// `forbidden` without the scope. The needs of a document are worked out once (documents are
// cached, lib/document-cache.ts); per request only the caller's scope set is asked.
import {
  DocumentNode,
  FragmentDefinitionNode,
  getNamedType,
  GraphQLCompositeType,
  GraphQLError,
  GraphQLSchema,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { AppError } from '../errors';
import { fieldRequirement, satisfies } from '../scopes';
import type { Operation, OperationStep } from './pipeline';

/** What the scope step needs to know of the caller. */
export interface CallerAccess {
  /** The caller's scopes; undefined without a valid token. */
  scopes: ReadonlySet<string> | undefined;
  /** Why a presented token was refused (answered where a field needs a caller). */
  authError?: Error;
}

/** One field the operation selects that needs more than nothing. */
interface FieldNeed {
  coordinate: string;
  path: readonly string[];
  /** Empty: a caller with a token; else alternative groups of scopes. */
  groups: readonly (readonly string[])[];
}

const needsByDocument = new WeakMap<DocumentNode, Map<string, readonly FieldNeed[]>>();

export function scopesStep<Caller, Context>(
  access: (op: Operation<Caller, Context>) => CallerAccess,
): OperationStep<Caller, Context> {
  return {
    name: 'scopes',
    before(op) {
      if (!op.document || !op.operation || !op.schema) return;
      const errors = scopeRefusals(op.schema, op.document, op.operation, () => access(op));
      if (errors.length) op.result = { data: null, errors };
    },
  };
}

/**
 * The refusals of the fields of `operation` that `caller` may not reach (none: it may run), by
 * what `schema` declares. The caller is asked only when some field needs more than nothing.
 */
export function scopeRefusals(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  access: () => CallerAccess,
): GraphQLError[] {
  const needs = needsOf(schema, document, operation);
  if (!needs.length) return [];
  const caller = access();
  const errors: GraphQLError[] = [];
  for (const need of needs) {
    // A field inside one refused already is moot: one error per outermost refused field.
    if (errors.length && errors.some((e) => isWithin(need.path, e.path!))) continue;
    if (!caller.scopes) {
      errors.push(refusal(need, caller.authError ?? new AppError('unauthorized', 'This field needs a valid token.')));
    } else if (need.groups.length && !satisfies(need.groups, caller.scopes)) {
      const wanted = need.groups.map((g) => g.join(' and ')).join(' or ');
      errors.push(refusal(need, new AppError('forbidden', `${need.coordinate} needs the scope ${wanted}.`)));
    }
  }
  return errors;
}

const isWithin = (path: readonly string[], outer: readonly (string | number)[]) =>
  outer.length < path.length && outer.every((key, i) => path[i] === key);

function refusal(need: FieldNeed, cause: Error): GraphQLError {
  const code = cause instanceof AppError ? cause.code : undefined;
  return new GraphQLError(cause.message, {
    path: need.path,
    originalError: cause,
    extensions: code ? { code, ...(cause instanceof AppError && cause.details ? { details: cause.details } : {}) } : {},
  });
}

/** The fields of the operation that need a caller or scopes, once per document and operation. */
function needsOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
): readonly FieldNeed[] {
  let byOperation = needsByDocument.get(document);
  if (!byOperation) needsByDocument.set(document, (byOperation = new Map<string, readonly FieldNeed[]>()));
  const key = operation.name?.value ?? '';
  const known = byOperation.get(key);
  if (known) return known;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const root = schema.getRootType(operation.operation);
  const needs: FieldNeed[] = [];
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode, parent: GraphQLCompositeType, path: string[], spread: Set<string>) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name === '__typename' || !(isObjectType(parent) || isInterfaceType(parent))) continue;
        const field = parent.getFields()[name];
        if (!field) continue;
        const at = [...path, selection.alias?.value ?? name];
        const requirement = fieldRequirement(parent, field);
        const coordinate = `${parent.name}.${name}`;
        if (requirement !== 'public' && !seen.has(coordinate)) {
          seen.add(coordinate);
          needs.push({ coordinate, path: at, groups: requirement === 'authenticated' ? [] : requirement });
        }
        const type = getNamedType(field.type);
        if (selection.selectionSet && isCompositeType(type)) walk(selection.selectionSet, type, at, spread);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type && isCompositeType(type)) walk(selection.selectionSet, type, path, spread);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || spread.has(name)) continue;
        const type = schema.getType(fragment.typeCondition.name.value);
        if (type && isCompositeType(type)) walk(fragment.selectionSet, type, path, new Set(spread).add(name));
      }
    }
  };
  if (root) walk(operation.selectionSet, root, [], new Set());
  byOperation.set(key, needs);
  return needs;
}
