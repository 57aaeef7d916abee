// Parsed and validated GraphQL documents, keyed by their text: callers (the gateway's planner,
// the facade, subscribers) send few distinct ones, so each is parsed and validated once.
import { DocumentNode, GraphQLError, GraphQLSchema, parse, specifiedRules, validate, ValidationRule } from 'graphql';

export class DocumentCache {
  private readonly docs = new Map<string, DocumentNode | readonly GraphQLError[]>();
  private readonly rules: readonly ValidationRule[];

  /** `extraRules`: checked besides the specification's (e.g. no introspection). */
  constructor(private readonly schema: GraphQLSchema, private readonly max = 2000, extraRules: readonly ValidationRule[] = []) {
    this.rules = extraRules.length ? [...specifiedRules, ...extraRules] : specifiedRules;
  }

  /** The document, or the errors that refuse it (unparsable, invalid against the schema). */
  get(source: string): DocumentNode | readonly GraphQLError[] {
    let doc = this.docs.get(source);
    if (!doc) {
      try {
        const parsed = parse(source);
        const errors = validate(this.schema, parsed, this.rules);
        doc = errors.length ? errors : parsed;
      } catch (err) {
        doc = [err as GraphQLError];
      }
      if (this.docs.size >= this.max) this.docs.delete(this.docs.keys().next().value!);
      this.docs.set(source, doc);
    }
    return doc;
  }
}
