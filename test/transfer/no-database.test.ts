// The transfer module's pieces that need no database: the streaming JSON splitter Karakeep files
// are read with (whatever the piece boundaries), and the pointing of an export's hub nodes at the
// new ids (its waits for a target to become referable are bounded per hub).
import { JsonMemberArrays, JsonShapeError } from '../../subgraphs/transfer/formats/json-members';
import { HubCall, pointHubRefs } from '../../subgraphs/transfer/hub-refs';

function split(text: string, size: number, maxChars = 1000) {
  const got: [string, unknown][] = [];
  const reader = new JsonMemberArrays(
    new Set(['bookmarks']),
    (key, json) => got.push([key, json === null ? null : JSON.parse(json)]),
    maxChars,
  );
  for (let at = 0; at < text.length; at += size) reader.write(text.slice(at, at + size));
  reader.end();
  return { got, arrays: [...reader.arrays] };
}

describe('JsonMemberArrays', () => {
  const doc = {
    lists: [{ id: 'a', name: 'has ] and [ and } in it' }],
    'book\\"marks': [1],
    bookmarks: [
      { title: 'quote " brace } bracket ] comma ,', tags: ['x', 'y'], nested: { deep: [[1], { a: '\\' }] } },
      'a string, with a comma',
      42,
      null,
      { content: { type: 'text', text: 'Ünïcode ☕ \n line' } },
    ],
    after: { bookmarks: ['not the root one'] },
  };
  const text = `\uFEFF ${JSON.stringify(doc, null, 1)}\n`;

  it('hands over each element of the wanted root arrays, whatever the pieces', () => {
    for (const size of [1, 2, 3, 7, 64, text.length]) {
      const { got, arrays } = split(text, size);
      expect(got).toEqual(doc.bookmarks.map((b) => ['bookmarks', b]));
      expect(arrays.sort()).toEqual(['book\\"marks', 'bookmarks', 'lists']);
    }
  });

  it('answers null for an element past the limit, and goes on', () => {
    const { got } = split(JSON.stringify({ bookmarks: ['x'.repeat(50), 'short'] }), 5, 20);
    expect(got).toEqual([
      ['bookmarks', null],
      ['bookmarks', 'short'],
    ]);
  });

  it('refuses what is not one whole JSON object', () => {
    for (const bad of ['[1, 2]', '"text"', '', '{"bookmarks": [1, 2', '{"a": "b"} {', '{"a": "unterminated}']) {
      expect(() => split(bad, 3)).toThrow(JsonShapeError);
    }
  });
});

describe('pointHubRefs', () => {
  const canvas = {
    nodes: [
      { id: 'c1', type: 'text', x: 0, y: 0, width: 10, height: 10, text: 'centre' },
      { id: 'c2', type: 'text', x: 100, y: 0, width: 10, height: 10, text: 'Note', ref: { type: 'note', id: 'old-1' } },
      {
        id: 'c3',
        type: 'text',
        x: 200,
        y: 0,
        width: 10,
        height: 10,
        text: 'Item',
        ref: { type: 'vault_item', id: 'old-2' },
      },
      {
        id: 'c4',
        type: 'text',
        x: 300,
        y: 0,
        width: 10,
        height: 10,
        text: 'Voice',
        ref: { type: 'voice', id: 'old-3' },
      },
    ],
  };
  const graph = {
    nodes: canvas.nodes.map((n, i) => ({ ...n, id: `n${i + 1}`, color: null, version: 1 })),
    edges: [
      {
        id: 'e1',
        fromNode: 'n1',
        toNode: 'n2',
        fromSide: null,
        toSide: null,
        fromEnd: null,
        toEnd: null,
        label: 'l',
        color: null,
      },
      {
        id: 'e2',
        fromNode: 'n1',
        toNode: 'n4',
        fromSide: null,
        toSide: null,
        fromEnd: null,
        toEnd: null,
        label: null,
        color: null,
      },
    ],
  };

  it('replaces the nodes whose target came across, remakes their edges, and bounds its waits per hub', async () => {
    const calls: [string, Record<string, unknown>][] = [];
    let slept = 0;
    const call: HubCall = (query, variables) => {
      const name = /mutation (\w+)|query (\w+)/.exec(query)!.slice(1).find(Boolean)!;
      calls.push([name, variables]);
      if (name === 'ImportHubGraph') return Promise.resolve({ data: { hub: { graph } } });
      // The new note is never referable (say it went to the trash): refused each time.
      if (name === 'ImportRefNode' && variables.refId === 'new-1')
        return Promise.resolve({
          error: { message: 'names none', extensions: { code: 'validation_error', details: { refId: ['x'] } } },
        });
      return Promise.resolve({
        data: { addHubNode: { id: 'made' }, addHubEdge: { id: 'e' }, removeHubNode: { id: 'x' } },
      });
    };
    const problems = await pointHubRefs(
      call,
      'hub',
      canvas,
      new Map([
        ['old-1', 'new-1'],
        ['old-2', 'new-2'],
      ]),
      (ms) => {
        slept += ms;
        return Promise.resolve();
      },
    );
    expect(slept).toBeLessThanOrEqual(5000);
    expect(problems).toEqual([
      expect.stringContaining('naming note new-1 could not be made'),
      expect.stringContaining('a voice the file did not bring'),
    ]);
    const made = calls.filter(([n]) => n === 'ImportRefNode' && n).map(([, v]) => v);
    expect(made.at(-1)).toMatchObject({ hubId: 'hub', type: 'vault_item', refId: 'new-2', x: 200, width: 10 });
    // Only the item's node was replaced: no edge touched it, and it alone was removed.
    expect(calls.filter(([n]) => n === 'ImportRefEdge')).toEqual([]);
    expect(calls.filter(([n]) => n === 'ImportRefRemove').map(([, v]) => v)).toEqual([
      { hubId: 'hub', nodeId: 'n3', version: 1 },
    ]);
  });

  it('makes the edges of a replaced node again between the new nodes', async () => {
    const calls: [string, Record<string, unknown>][] = [];
    const call: HubCall = (query, variables) => {
      const name = /mutation (\w+)|query (\w+)/.exec(query)!.slice(1).find(Boolean)!;
      calls.push([name, variables]);
      if (name === 'ImportHubGraph') return Promise.resolve({ data: { hub: { graph } } });
      return Promise.resolve({ data: { addHubNode: { id: `ref-${String(variables.refId)}` } } });
    };
    const problems = await pointHubRefs(call, 'hub', canvas, new Map([['old-1', 'new-1']]));
    expect(problems).toEqual([expect.stringContaining('vault_item'), expect.stringContaining('voice')]);
    expect(calls.filter(([n]) => n === 'ImportRefEdge').map(([, v]) => v)).toEqual([
      expect.objectContaining({ fromNode: 'n1', toNode: 'ref-new-1', label: 'l' }),
    ]);
  });
});
