// The transfer module's pieces that need no database: the Karakeep reader (stream-json, an element
// at a time, whatever the piece boundaries, with its limits and errors), and the pointing of an
// export's hub nodes at the new ids (its waits for a target to become referable are bounded per hub).
import fs from 'node:fs';
import path from 'node:path';
import { JsonShapeError, readJsonArray, TOO_LONG } from '../../subgraphs/transfer/formats/json-array';
import { KarakeepRecord, NotKarakeepError, readKarakeep } from '../../subgraphs/transfer/formats/karakeep';
import { HubCall, pointHubRefs } from '../../subgraphs/transfer/hub-refs';

/** `text` as the blob store gives it: pieces of `size` characters, read one by one. */
function piecesOf(text: string, size: number, pulled?: { count: number }) {
  return async function* () {
    for (let at = 0; at < text.length; at += size) {
      if (pulled) pulled.count++;
      await Promise.resolve();
      yield text.slice(at, at + size);
    }
  };
}

async function karakeep(text: string, size = text.length): Promise<KarakeepRecord[]> {
  const records: KarakeepRecord[] = [];
  await readKarakeep(piecesOf(text, size), (record) => {
    records.push(record);
  });
  return records;
}

async function elements(text: string, size: number, maxElementChars: number, key = 'bookmarks') {
  const got: [number, unknown][] = [];
  const arrays = await readJsonArray(
    piecesOf(text, size)(),
    key,
    (value, index) => {
      got.push([index, value]);
    },
    { maxElementChars },
  );
  return { got, arrays: [...arrays].sort() };
}

describe('the Karakeep reader', () => {
  const doc = {
    lists: [
      { id: 'l1', name: 'has ] and [ and } in it', type: 'manual', parentId: null },
      { id: 'l2', name: 'Rust', type: 'manual', parentId: 'l1' },
      { id: 'l3', name: 'Saved search', type: 'smart', parentId: null },
    ],
    'book\\"marks': [1],
    bookmarks: [
      {
        createdAt: 1733064000,
        title: 'quote " brace } bracket ] comma , emoji 😀',
        tags: ['x', 'y'],
        lists: ['l2', 'l3'],
        content: { type: 'link', url: 'https://example.com/a?b=c' },
        nested: { deep: [[1], { a: '\\' }] },
        note: 'an annotation',
        archived: true,
      },
      'a string, with a comma',
      42,
      null,
      { title: '', content: { type: 'text', text: 'Ünïcode ☕ 😀\n line \u0000 end' } },
      { title: 'an asset', content: { type: 'asset' } },
    ],
    after: { bookmarks: ['not the root one'] },
  };
  const text = `\uFEFF ${JSON.stringify(doc, null, 1)}\n`;

  it('reads each bookmark of the root list into records, whatever the pieces', async () => {
    const whole = await karakeep(text);
    expect(whole.map((r) => [r.kind, r.path])).toEqual([
      ['link', 'bookmarks[0]: quote " brace } bracket ] comma , emoji 😀'],
      ['note', expect.stringMatching(/^karakeep: [0-9a-f]{64}$/)],
      ['skip', 'bookmarks[1]'],
      ['skip', 'bookmarks[2]'],
      ['skip', 'bookmarks[3]'],
      ['text', 'bookmarks[4]: Ünïcode ☕ 😀'],
      ['skip', 'bookmarks[5]: an asset'],
    ]);
    expect(whole[0]).toMatchObject({
      url: 'https://example.com/a?b=c',
      tags: ['x', 'y', 'has-]-and-[-and-}-in-it', 'rust'],
      addedAt: '2024-12-01T14:40:00.000Z',
      archived: true,
    });
    expect(whole[5]).toMatchObject({ text: 'Ünïcode ☕ 😀\n line \u0000 end' });
    for (const size of [1, 2, 3, 7, 64, 1000]) expect(await karakeep(text, size)).toEqual(whole);
  });

  it('reads the real export fixture the same whatever the pieces', async () => {
    const fixture = fs.readFileSync(path.join(__dirname, 'fixtures', 'karakeep-export.json'), 'utf8');
    const whole = await karakeep(fixture);
    expect(whole.filter((r) => r.kind !== 'skip').length).toBeGreaterThan(3);
    for (const size of [1, 13, 4096]) expect(await karakeep(fixture, size)).toEqual(whole);
  });

  it('skips a bookmark longer than 8 Mi characters, and goes on', async () => {
    const long = { title: 'long', content: { type: 'text', text: 'x'.repeat(8 * 1024 * 1024 + 1) } };
    const short = { title: 'short', content: { type: 'link', url: 'https://example.com/' } };
    const records = await karakeep(JSON.stringify({ bookmarks: [short, long, short, long] }), 1024 * 1024);
    expect(records.map((r) => [r.kind, r.kind === 'skip' ? r.message : r.path])).toEqual([
      ['link', 'bookmarks[0]: short'],
      ['skip', 'longer than 8388608 characters'],
      ['link', 'bookmarks[2]: short'],
      ['skip', 'longer than 8388608 characters'],
    ]);
  });

  it('refuses what is not a Karakeep JSON object, whole, with a clear error', async () => {
    const cases: [string, RegExp][] = [
      ['[1, 2]', /not a JSON object/],
      ['"text"', /not a JSON object/],
      ['', /not a JSON object/],
      ['<!DOCTYPE NETSCAPE-Bookmark-file-1>', /not a JSON object/],
      [' \n ', /not a JSON object/],
      ['{"bookmarks": [1, 2', /ends before its end/],
      [text.slice(0, -40), /ends before its end/],
      ['{"a": "unterminated}', /ends before its end/],
      ['{"a": "b"} {', /malformed|ends before its end/],
      ['{"bookmarks": [{"a" 1}]}', /malformed/],
      ['{"bookmarks": [1,]}', /malformed/],
      ['{"lists": []}', /no "bookmarks" list/],
      ['{"bookmarks": {"a": 1}}', /no "bookmarks" list/],
      [`{"bookmarks": ${'['.repeat(2000)}`, /depth/],
    ];
    for (const [bad, message] of cases)
      for (const size of [3, bad.length || 1]) {
        const reading = karakeep(bad, size);
        await expect(reading).rejects.toThrow(NotKarakeepError);
        await expect(reading).rejects.toThrow(/^not a Karakeep export: /);
        await expect(reading).rejects.toThrow(message);
      }
  });

  it('hands each bookmark over before it reads the next piece, and gives the event loop turns', async () => {
    const bookmark = { title: 'b'.repeat(110), content: { type: 'link', url: 'https://example.com/' } };
    const big = JSON.stringify({ lists: [], bookmarks: Array.from({ length: 5_000 }, () => bookmark) });
    expect(big.length).toBeGreaterThan(13 * 64 * 1024);
    // A record waits: the file is not read on meanwhile (one 64 KiB piece at a time).
    const pulled = { count: 0 };
    let pulledAtFirst = -1;
    let pulledAfterWait = -1;
    const kinds = new Set<string>();
    let records = 0;
    await readKarakeep(piecesOf(big, 64 * 1024, pulled), async (record) => {
      kinds.add(record.kind);
      if (records++ > 0) return;
      pulledAtFirst = pulled.count;
      await new Promise((resolve) => setTimeout(resolve, 20));
      pulledAfterWait = pulled.count;
    });
    expect([records, [...kinds]]).toEqual([5_000, ['link']]);
    // The lists' pass stopped after them (one piece), the bookmarks' pass had read one piece.
    expect([pulledAtFirst, pulledAfterWait]).toEqual([2, 2]);

    // The whole file as one piece: still read in slices, with the event loop served between.
    let turns = 0;
    let turning = true;
    const turn = () => {
      turns++;
      if (turning) setImmediate(turn);
    };
    setImmediate(turn);
    await karakeep(big);
    turning = false;
    expect(turns).toBeGreaterThanOrEqual(13);
  });

  it('lets what the record handler throws through as it is', async () => {
    const failure = new Error('the cap is reached');
    await expect(
      readKarakeep(piecesOf(text, 5), () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
  });
});

describe('readJsonArray', () => {
  it('hands over each element of the root array, past the limit as TOO_LONG, whatever the pieces', async () => {
    const doc = JSON.stringify({
      bookmarks: [
        { a: 'short' },
        { a: 'x'.repeat(40) },
        'y'.repeat(40),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        'short',
        { b: [{ c: 'x'.repeat(40) }] },
      ],
      lists: [{ z: 1 }],
      other: 'x'.repeat(100),
    });
    const expected = [
      [0, { a: 'short' }],
      [1, TOO_LONG],
      [2, TOO_LONG],
      [3, TOO_LONG],
      [4, 'short'],
      [5, TOO_LONG],
    ];
    for (const size of [1, 4, 64, doc.length]) {
      const { got, arrays } = await elements(doc, size, 20);
      expect(got).toEqual(expected);
      expect(arrays).toEqual(['bookmarks', 'lists']);
    }
  });

  it('refuses a key longer than the limit (the parser holds keys whole)', async () => {
    const doc = `{"bookmarks": [{"${'k'.repeat(100)}": 1}]}`;
    await expect(elements(doc, 5, 20)).rejects.toThrow(JsonShapeError);
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
