// Parsed and validated GraphQL documents, keyed by their text, so that each text a caller sends
// again (the gateway's planned fetches, the facade's operations, subscribers) is parsed and
// validated once. Bounded by the size of the texts it holds, least recently used out first: a
// document's syntax tree takes some fifty times its text in memory, and a caller sending many
// large distinct texts must neither grow the process nor push out the documents in constant use.
import { DocumentNode, GraphQLError, GraphQLSchema, parse, specifiedRules, validate, ValidationRule } from 'graphql';
import { LRUCache } from 'lru-cache';

export interface DocumentCacheOptions {
  /** The sum of the cached texts' lengths (default 1 MiB of text: some 50 MiB of syntax trees). */
  maxTextLength?: number;
  /** Checked besides the specification's rules (e.g. no introspection). */
  rules?: readonly ValidationRule[];
  /** No "Did you mean …?" in validation errors: they reveal the schema as introspection would. */
  hideSuggestions?: boolean;
}

export class DocumentCache {
  private readonly docs: LRUCache<string, DocumentNode>;
  private readonly rules: readonly ValidationRule[];
  private readonly hideSuggestions: boolean;

  constructor(
    private readonly schema: GraphQLSchema,
    options: DocumentCacheOptions = {},
  ) {
    const maxSize = options.maxTextLength ?? 1024 * 1024;
    // One text may take at most a sixteenth of the room: larger ones are parsed every time.
    this.docs = new LRUCache({
      maxSize,
      maxEntrySize: Math.ceil(maxSize / 16),
      sizeCalculation: (_doc, text) => Math.max(1, text.length),
    });
    this.rules = options.rules?.length ? [...specifiedRules, ...options.rules] : specifiedRules;
    this.hideSuggestions = options.hideSuggestions ?? false;
  }

  /** The document, or the errors that refuse it (unparsable, invalid against the schema); refusals are not kept. */
  get(source: string): DocumentNode | readonly GraphQLError[] {
    const cached = this.docs.get(source);
    if (cached) return cached;
    let doc: DocumentNode;
    try {
      doc = parse(source);
    } catch (err) {
      // A syntax error; or a RangeError from a nesting deep enough to exhaust the stack.
      return [
        err instanceof GraphQLError
          ? err
          : new GraphQLError(`The document could not be parsed: ${(err as Error).message}.`),
      ];
    }
    let errors: readonly GraphQLError[];
    try {
      errors = validate(this.schema, doc, this.rules, { hideSuggestions: this.hideSuggestions });
    } catch (err) {
      return [new GraphQLError(`The document could not be validated: ${(err as Error).message}.`)];
    }
    if (errors.length) return errors;
    this.docs.set(source, doc);
    return doc;
  }
}
