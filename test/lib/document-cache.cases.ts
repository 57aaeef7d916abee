// The cache of parsed and validated documents (lib/document-cache.ts): bounded by the length of
// the texts it keeps, the least recently used out first, refusals never kept.
import { buildSchema, GraphQLError } from 'graphql';
import { DocumentCache } from '../../lib/document-cache';

const schema = buildSchema('type Query { a: Int, b(x: Int): Int }');
const padded = (n: number, width: number) => `{ a } # ${String(n).padEnd(width, '.')}`;

describe('DocumentCache', () => {
  it('answers the same document for the same text, and keeps texts up to its length budget, least recently used out first', () => {
    const cache = new DocumentCache(schema, { maxTextLength: 2000 });
    const hot = '{ b(x: 1) }';
    const first = cache.get(hot);
    expect(cache.get(hot)).toBe(first);
    const oldest = cache.get(padded(0, 90));
    // 100 texts of about 100 characters, five times the budget; the hot one is asked for between them.
    for (let i = 1; i < 100; i++) {
      expect('kind' in cache.get(padded(i, 90))).toBe(true);
      expect(cache.get(hot)).toBe(first);
    }
    expect(cache.get(padded(0, 90))).not.toBe(oldest); // pushed out, parsed again
    const recent = cache.get(padded(99, 90));
    expect(cache.get(padded(99, 90))).toBe(recent);
  });

  it('never keeps a text larger than a sixteenth of its budget, nor a refusal', () => {
    const cache = new DocumentCache(schema, { maxTextLength: 1600 });
    const large = padded(1, 200);
    expect(cache.get(large)).not.toBe(cache.get(large));
    const invalid = '{ nope }';
    const refusal = cache.get(invalid);
    expect(Array.isArray(refusal)).toBe(true);
    expect(cache.get(invalid)).not.toBe(refusal);
  });

  it("a document nested deeper than the parser's stack is a GraphQL error, not a thrown RangeError", () => {
    const cache = new DocumentCache(schema);
    const errors = cache.get(`${'{ a '.repeat(20_000)}${'}'.repeat(20_000)}`) as readonly GraphQLError[];
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(GraphQLError);
    expect(errors[0].toJSON().message).toMatch(/could not be (parsed|validated)/);
  });

  it('hides suggestions and checks extra rules when told to', () => {
    const open = new DocumentCache(schema).get('{ aa }') as readonly GraphQLError[];
    expect(open[0].message).toMatch(/Did you mean/);
    const closed = new DocumentCache(schema, { hideSuggestions: true }).get('{ aa }') as readonly GraphQLError[];
    expect(closed[0].message).not.toMatch(/Did you mean/);
  });
});
