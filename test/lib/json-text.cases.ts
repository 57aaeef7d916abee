// JSON serialised ahead of time (lib/json-text.ts): an array built a chunk at a time is the same
// text as JSON.stringify of it, a body with such values is spliced into the same JSON, the chunks
// leave the event loop between them, and the answer-size step counts a built array unwalked.
import {
  answerJson,
  buildJsonArray,
  JSON_CHUNK_ITEMS,
  jsonBody,
  JsonText,
  keepArrayText,
  keepRanges,
  keptAnswerJson,
  markHoldsKeptText,
} from '../../lib/json-text';
import { jsonAtLeast, jsonExceeds } from '../../lib/response-size';

const items = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `n${i}`, text: `"quoted" ü ${i}`, at: new Date(i * 1000), gone: null }));
const form = (x: { id: string; text: string; at: Date }) => ({ node_id: x.id, text: x.text, at: x.at });

describe('buildJsonArray', () => {
  it('with kept item texts: the same text, each item serialised once however many arrays hold it', async () => {
    const kept = new WeakMap<object, string>();
    const list = items(JSON_CHUNK_ITEMS + 3);
    let formed = 0;
    const counted = (x: { id: string; text: string; at: Date }) => (formed++, form(x));
    const whole = await buildJsonArray(list, counted, kept);
    expect(whole.bytes.toString('utf8')).toBe(JSON.stringify(list.map(form)));
    expect(formed).toBe(list.length);
    // Another array of some of the same items, in another order: spliced from the kept texts.
    const some = [list[7], list[2], list[JSON_CHUNK_ITEMS + 1]];
    const part = await buildJsonArray(some, counted, kept);
    expect(part.bytes.toString('utf8')).toBe(JSON.stringify(some.map(form)));
    expect(formed).toBe(list.length);
    // A new object with the same content is not the kept one.
    await buildJsonArray([{ ...list[0] }], counted, kept);
    expect(formed).toBe(list.length + 1);
  });

  it('gives the text JSON.stringify gives, for none, one, and several chunks', async () => {
    for (const n of [0, 1, JSON_CHUNK_ITEMS, JSON_CHUNK_ITEMS * 2 + 7]) {
      const list = items(n);
      const text = await buildJsonArray(list, form);
      expect(text.bytes.toString('utf8')).toBe(JSON.stringify(list.map(form)));
      expect(JSON.stringify({ a: text })).toBe(JSON.stringify({ a: list.map(form) })); // toJSON, the slow way
    }
  });

  it('lets the event loop run between chunks', async () => {
    let ran = false;
    setImmediate(() => (ran = true));
    await buildJsonArray(items(JSON_CHUNK_ITEMS * 3), form);
    // Built in one step, the array would be done before anything queued on the loop ran.
    expect(ran).toBe(true);
  });

  it('remembers the array’s size as the answer-size step counts it, so it is not walked again', async () => {
    const list = items(1200);
    const walked = jsonAtLeast(list);
    await buildJsonArray(list, form);
    expect(jsonAtLeast(list)).toBe(walked);
    expect(jsonExceeds({ graph: { nodes: list } }, walked)).toBe(true);
    expect(jsonExceeds({ graph: { nodes: list } }, walked * 2)).toBe(false);
  });
});

describe('jsonBody', () => {
  it('splices JsonText values into the same JSON as stringifying the plain values', async () => {
    const list = items(3);
    const body = { id: 'h', nodes: await buildJsonArray(list, form), skipped: undefined, count: 3, s: 'é"' };
    const plain = { id: 'h', nodes: list.map(form), skipped: undefined, count: 3, s: 'é"' };
    expect(Buffer.concat(jsonBody(body)!).toString('utf8')).toBe(JSON.stringify(plain));
    expect(Buffer.concat(jsonBody({ only: new JsonText(Buffer.from('[1]')) })!).toString()).toBe('{"only":[1]}');
  });

  it('leaves bodies without JsonText to JSON.stringify', () => {
    expect(jsonBody({ a: 1 })).toBeUndefined();
    expect(jsonBody([new JsonText(Buffer.from('1'))])).toBeUndefined();
    expect(jsonBody(null)).toBeUndefined();
  });
});

describe('answerJson', () => {
  it('gives JSON.stringify’s text, a kept array’s text put in where a marked answer holds that very array', async () => {
    const list = items(JSON_CHUNK_ITEMS + 1);
    const { text, bytes } = await keepArrayText(list);
    expect(text).toBe(JSON.stringify(list));
    expect(bytes).toBe(text.length); // Latin-1 (ü included): one byte a character
    expect((await keepArrayText(['→'])).bytes).toBe(2 * '["→"]'.length);
    const data = { hub: { id: 'h', nodes: list, copy: [...list], odd: [undefined, () => 1, null], gone: undefined } };
    const answer = { errors: [{ message: 'm', path: ['hub', 0] }], data, extensions: { at: new Date(0) } };
    expect(answerJson(answer)).toBe(JSON.stringify(answer));
    markHoldsKeptText(data);
    expect(answerJson(answer)).toBe(JSON.stringify(answer));
    // A kept array never changes; changed here, the marked answer shows that its text was put in, not made again.
    list[0].id = 'changed';
    expect(answerJson(answer)).toBe(JSON.stringify(answer).replace('"changed"', '"n0"'));
    expect(answerJson({ ...answer, data: { ...data } })).toBe(JSON.stringify(answer));
  });
});

describe('keptAnswerJson and keepRanges', () => {
  it('say where kept texts lie in an answer, and keep them for the arrays parsed from it in the next process', async () => {
    const nodes = items(3);
    const edges = items(2);
    await keepArrayText(nodes);
    await keepArrayText(edges);
    const data = { hub: { id: 'h', nodes, more: [{ edges }] } };
    markHoldsKeptText(data);
    const { text, ranges } = keptAnswerJson({ data })!;
    expect(ranges.map((r) => r.path)).toEqual([
      ['data', 'hub', 'nodes'],
      ['data', 'hub', 'more', 0, 'edges'],
    ]);
    expect(keptAnswerJson({ data: { ...data } })).toBeUndefined();
    // The next process: parsed, the ranges kept; a changed array then shows that its text was put in.
    const parsed = JSON.parse(text) as { data: typeof data };
    keepRanges(parsed, text, JSON.stringify(ranges));
    parsed.data.hub.nodes[0].id = 'changed';
    parsed.data.hub.more[0].edges[0].id = 'changed';
    expect(answerJson(parsed)).toBe(text);
    expect(jsonAtLeast(parsed.data.hub.nodes)).toBe(ranges[0].end - ranges[0].start);
    // Ranges that lead nowhere, or to no array in the text, are left out.
    for (const header of [
      'not json',
      '[{"path":["data","hub","id"],"start":0,"end":2}]',
      JSON.stringify([{ ...ranges[0], start: 1 }]),
    ]) {
      const again = JSON.parse(text) as { data: typeof data };
      keepRanges(again, text, header);
      again.data.hub.nodes[0].id = 'changed';
      expect(answerJson(again)).toBe(JSON.stringify(again));
    }
  });
});
