// The pipeline's first step where the caller's slots can be seen (issue 41 finding 2): an
// operation that selects an expensive root field (lib/kit/expensive.ts: searches, neighbours)
// from a user whose EXPENSIVE_PER_USER slots are all taken is refused with `rate_limit_exceeded`
// (429 and Retry-After on /graphql) before it is checked against the limits, validated, planned
// or executed: an attacker at full rate sends mostly such operations, and each used to cost a
// whole validation and plan before the resolver's gate refused it.
//
// Cheap in the common case: nothing is looked at unless the caller is a user already verified
// in this process (a forged token goes the usual way and gets 401, never 429) and that user's
// slots are all taken; then the document's root fields are read (parsed once per text, kept).
import { DocumentNode, getOperationAST, Kind, OperationTypeNode, parse, SelectionSetNode } from 'graphql';
import { AppError } from '../errors';
import { expensiveField, ExpensiveGate, ExpensiveKind, expensiveFieldNames } from '../kit/expensive';
import type { Operation, OperationStep } from './pipeline';

export interface ExpensiveEarlyParts<Caller, Context> {
  gate: ExpensiveGate;
  /** The caller's user, only when this process has already verified its credentials; else undefined. */
  userOf: (op: Operation<Caller, Context>) => string | undefined;
  /** The parser's token limit (GRAPHQL_MAX_TOKENS): a longer document is left to the limits step. */
  maxTokens: number;
}

/** Documents of at most this many characters have their expensive field remembered, up to KEPT of them. */
const REMEMBERED_CHARS = 4096;
const KEPT = 500;

/** The kind of the first expensive root field the chosen operation selects (fragments included), if any. */
export function expensiveKindOf(
  document: DocumentNode,
  operationName: string | undefined,
  variables: Record<string, unknown> = {},
): ExpensiveKind | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation || operation.operation === OperationTypeNode.SUBSCRIPTION) return undefined;
  const type = operation.operation === OperationTypeNode.QUERY ? 'Query' : 'Mutation';
  const fragments = new Map(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
  const seen = new Set<string>();
  const find = (set: SelectionSetNode): ExpensiveKind | undefined => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const declared = expensiveField(type, s.name.value);
        if (
          declared &&
          (!declared.whenArgument ||
            s.arguments?.some(
              (a) =>
                a.name.value === declared.whenArgument &&
                a.value.kind !== Kind.NULL &&
                (a.value.kind !== Kind.VARIABLE || variables[a.value.name.value] != null),
            ))
        )
          return declared.kind;
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        const kind = find(s.selectionSet);
        if (kind) return kind;
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        const kind = fragment && find(fragment.selectionSet);
        if (kind) return kind;
      }
    }
    return undefined;
  };
  return find(operation.selectionSet);
}

export function expensiveEarlyStep<Caller, Context>(
  parts: ExpensiveEarlyParts<Caller, Context>,
): OperationStep<Caller, Context> {
  const { gate, userOf, maxTokens } = parts;
  /** By query text: the parsed document, or null when it does not parse within the limits. */
  const documents = new Map<string, DocumentNode | null>();
  const documentOf = (query: string): DocumentNode | null => {
    let document = documents.get(query);
    if (document !== undefined) return document;
    try {
      document = parse(query, { maxTokens, noLocation: true });
    } catch {
      document = null; // the limits and parse steps answer it
    }
    if (query.length <= REMEMBERED_CHARS) {
      if (documents.size >= KEPT) documents.delete(documents.keys().next().value!);
      documents.set(query, document);
    }
    return document;
  };
  return {
    name: 'expensive-early',
    before(op) {
      const { query, operationName } = op.request;
      if (typeof query !== 'string') return;
      const userId = userOf(op);
      // A free slot (the usual case): nothing more is looked at.
      if (!userId || !gate.refusal(userId, 'search')) return;
      // Only a document that names an expensive field at all is parsed.
      const names = expensiveFieldNames();
      if (!names.some((name) => query.includes(name))) return;
      const document = documentOf(query);
      if (!document) return;
      const variables = op.request.variables && typeof op.request.variables === 'object' ? op.request.variables : {};
      const kind = expensiveKindOf(document, typeof operationName === 'string' ? operationName : undefined, variables);
      if (!kind) return;
      const refusal = gate.refusal(userId, kind)!;
      op.result = {
        errors: [new AppError('rate_limit_exceeded', refusal.message, refusal.details, refusal.retryAfter)],
      };
      // Answered now (a caller that runs the steps synchronously sees it); sent once the hold is over.
      return gate.holdRefusal();
    },
  };
}
