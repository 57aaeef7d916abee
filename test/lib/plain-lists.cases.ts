// Lists answered from kept arrays (lib/plain-lists.ts) give what graphql-js gives: the same data
// and errors, the same JSON (answerJson with the kept texts put in), for aliases, fragments,
// @skip/@include, __typename, enums, a date scalar, nulls, lists under lists and a parent an error
// nulled; selections that are not leaves only, a field with arguments or a resolver, a type with
// isTypeOf and an entity are left to graphql-js. A kept array is built once, a chunk at a time.
import { buildSubgraphSchema } from '@apollo/subgraph';
import { execute, GraphQLResolveInfo, parse } from 'graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { answerJson, JSON_CHUNK_ITEMS } from '../../lib/json-text';
import {
  answerPlainList,
  buildPlainList,
  expectPlainLists,
  PlainList,
  plainSelection,
  withPlainLists,
} from '../../lib/plain-lists';
import { jsonAtLeast } from '../../lib/response-size';

const typeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  scalar DateTimeISO
  enum Kind { TEXT LINK }
  type Item { id: ID! n: Int! label: String kind: Kind! at: DateTimeISO! withArg(x: Int): Int computed: String }
  type Checked { id: ID! }
  type Keyed @key(fields: "id") { id: ID! }
  type Strict { id: ID! must: Int! }
  type Box { id: ID! items: [Item!]! checked: [Checked!]! keyed: [Keyed!]! strict: [Strict!]! boom: String! }
  type Query { box: Box! boxes: [Box] }
`);

const items = Array.from({ length: JSON_CHUNK_ITEMS * 2 + 3 }, (_, i) =>
  Object.freeze({
    id: `i${i}`,
    n: i,
    label: i % 3 ? `label "${i}" ü` : null,
    kind: i % 2 ? 'link' : 'text',
    at: new Date(Date.UTC(2024, 0, 1) + i * 1000),
    withArg: 5,
  }),
);
const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `x${i}` }));
/** The second item's non-null `must` is null: graphql-js's error, not a kept answer. */
const strict = [
  { id: 's0', must: 1 },
  { id: 's1', must: null },
];

/** Kept answers by list and selection, as a module keeps them; `answered` counts lists answered from them. */
let kept = new Map<string, Promise<PlainList | undefined>>();
let built = 0;
let answered = 0;
const list =
  (name: string, source: readonly object[]) =>
  async (_parent: unknown, _args: unknown, ctx: object, info: GraphQLResolveInfo) => {
    const selection = plainSelection(info, ctx);
    if (!selection) return source;
    const key = `${name} ${selection.key}`;
    if (!kept.has(key)) kept.set(key, (built++, buildPlainList(source, selection)));
    const plain = await kept.get(key);
    if (!plain) return source;
    answered++;
    return answerPlainList(info, ctx, plain);
  };

const box = (id: string) => ({ id });
const schema = buildSubgraphSchema({
  typeDefs,
  resolvers: {
    DateTimeISO: DateTimeISOResolver,
    Kind: { TEXT: 'text', LINK: 'link' },
    Item: { computed: (item: { id: string }) => `computed ${item.id}` },
    Checked: { __isTypeOf: () => true },
    Box: {
      items: list('items', items),
      checked: list('checked', ids(3)),
      keyed: list('keyed', ids(3)),
      strict: list('strict', strict),
      boom: (b: { id: string }) => {
        if (b.id === 'b1') throw new Error('boom');
        return 'ok';
      },
    },
    Query: { box: () => box('b0'), boxes: () => [box('b0'), box('b1'), box('b2')] },
  } as never,
});

/** The operation through graphql-js alone, and as a subgraph's executor runs it (kept lists put in). */
async function both(query: string, variableValues?: Record<string, unknown>) {
  const document = parse(query);
  const reference = await execute({ schema, document, variableValues, contextValue: {} });
  const context = {};
  expectPlainLists(context);
  const before = answered;
  const result = withPlainLists(context, await execute({ schema, document, variableValues, contextValue: context }));
  return { reference, result, answered: answered - before };
}

async function expectSame(query: string, variableValues?: Record<string, unknown>) {
  const { reference, result, answered } = await both(query, variableValues);
  expect(result).toEqual(reference);
  expect(answerJson(result)).toBe(JSON.stringify(reference));
  // The answer-size step counts a kept array as it would have walked graphql-js's.
  expect(jsonAtLeast(result)).toBe(jsonAtLeast(reference));
  return answered;
}

beforeEach(() => {
  kept = new Map();
  built = 0;
});

describe('plain lists', () => {
  it('answer leaves-only selections as graphql-js does, from kept arrays', async () => {
    const all = 'id n label kind at';
    expect(await expectSame(`{ box { id items { ${all} } } }`)).toBe(1);
    expect(await expectSame(`{ box { items { __typename first: id at n n kind } } }`)).toBe(1);
    expect(
      await expectSame(
        `query ($no: Boolean!) { box { items { ...F ... on Item { label } kind @skip(if: $no) n @include(if: $no) } } }
         fragment F on Item { id at }`,
        { no: true },
      ),
    ).toBe(1);
    // Under a list of parents, one of which an error nulled after its list was answered (boom is
    // non-null on a nullable Box): nothing is put in there.
    expect(await expectSame(`{ boxes { id items { id } boom } }`)).toBe(3);
    expect(await expectSame(`{ a: box { items { id } } b: box { items { id } } }`)).toBe(2);
  });

  it('leave other selections to graphql-js', async () => {
    expect(await expectSame('{ box { items { id computed } } }')).toBe(0); // a field with a resolver
    expect(await expectSame('{ box { items { id withArg(x: 1) } } }')).toBe(0); // a field with arguments
    expect(await expectSame('{ box { checked { id } } }')).toBe(0); // isTypeOf
    expect(await expectSame('{ box { keyed { id } } }')).toBe(0); // an entity: the gateway may merge into it
    expect(await expectSame('{ box { strict { id must } } }')).toBe(0); // a null in a non-null field: the error
    expect(await expectSame('{ box { strict { id } } }')).toBe(1);
    expect(built).toBe(2);
    // Executed without the executor that puts kept arrays in: never deferred.
    const context = {};
    const info = { returnType: schema.getType('Item') } as unknown as GraphQLResolveInfo;
    expect(plainSelection(info, context)).toBeUndefined();
  });

  it('build each selection once, shared by the executions after it, a chunk at a time', async () => {
    const query = '{ box { items { id at } } }';
    const first = await both(query);
    const second = await both(query);
    expect(built).toBe(1);
    const items1 = (first.result.data!.box as { items: unknown[] }).items;
    expect((second.result.data!.box as { items: unknown[] }).items).toBe(items1);
    expect(Object.isFrozen(items1) && Object.isFrozen(items1[0])).toBe(true);
    // Built in one step, the array would be done before anything queued on the loop ran.
    let ran = false;
    setImmediate(() => (ran = true));
    kept = new Map();
    await both('{ box { items { id n } } }');
    expect(ran).toBe(true);
  });
});
