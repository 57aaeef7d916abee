// The one cursor codec (lib/paging.ts): what pageOf hands out comes back as the same keys, and
// anything else is a validation_error on `cursor`, never a query or a 500.
import { decodeCursor, decodeSearchCursor, encodeCursor, encodeSearchCursor } from '../../lib/paging';

const ID = '0190a5b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b';
const refused = expect.objectContaining({
  code: 'validation_error',
  details: { cursor: ['is not a cursor this service handed out'] },
});

describe('cursor codec', () => {
  it('gives back the keys it encoded: a moment, a uuid, a key text', () => {
    const at = new Date(1_750_000_000_123);
    expect(decodeCursor(encodeCursor([at, ID]), ['time', 'uuid'])).toEqual([at, ID]);
    expect(decodeCursor(encodeCursor(['prefix-ä']), ['text'])).toEqual(['prefix-ä']);
    // Opaque to a URL: base64url has nothing to escape.
    expect(encodeCursor([at, ID])).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('refuses what it did not hand out', () => {
    const bad = [
      '',
      '!!',
      'bm90IGEgY3Vyc29y', // not base64url JSON
      `${encodeCursor([ID])}A`, // a tail: not the canonical encoding
      Buffer.from(`["${ID}"]`).toString('base64'), // base64 with padding, not base64url
      encodeCursor([ID, ID]), // too many keys
      encodeCursor([`x${ID}`]), // not a uuid
      encodeCursor([1.5]),
      'A'.repeat(601),
    ];
    for (const cursor of bad) expect(() => decodeCursor(cursor, ['uuid'])).toThrow(refused);
    expect(() => decodeCursor(encodeCursor([ID, ID]), ['time', 'uuid'])).toThrow(refused);
    expect(() => decodeCursor(encodeCursor(['a'.repeat(65)]), ['text'])).toThrow(refused);
    expect(() => decodeCursor(encodeCursor(['']), ['text'])).toThrow(refused);
  });

  it('writes a flag (a boolean column) as 0 or 1 and takes nothing else for it', () => {
    const at = new Date(1_750_000_000_123);
    expect(decodeCursor(encodeCursor([true, at, ID]), ['flag', 'time', 'uuid'])).toEqual([1, at, ID]);
    expect(decodeCursor(encodeCursor([false]), ['flag'])).toEqual([0]);
    for (const bad of [2, -1, 0.5, '1', null])
      expect(() => decodeCursor(encodeCursor([bad as unknown as string]), ['flag'])).toThrow(refused);
  });
});

describe('search cursors', () => {
  const query = ['owner', 'cafe', null, 'tag'];
  const otherQuery = expect.objectContaining({
    code: 'validation_error',
    details: { cursor: ['is not a cursor this service handed out for this query'] },
  });

  it('give back their offset for the query they were made for, and only for it', () => {
    expect(decodeSearchCursor(encodeSearchCursor(query, 40), query)).toBe(40);
    expect(decodeSearchCursor(encodeSearchCursor(query, 40), [...query])).toBe(40);
    for (const another of [
      ['owner', 'tea', null, 'tag'],
      ['someone else', 'cafe', null, 'tag'],
      [...query, true],
    ])
      expect(() => decodeSearchCursor(encodeSearchCursor(query, 40), another)).toThrow(otherQuery);
  });

  it('refuse a page cursor, an offset that is not a positive integer, and made-up text', () => {
    expect(() => decodeSearchCursor(encodeCursor([ID]), query)).toThrow();
    const key = decodeCursor(encodeSearchCursor(query, 1), ['text', 'text'])[0] as string;
    for (const offset of ['o0', 'o-1', 'o1.5', '40', 'o01'])
      expect(() => decodeSearchCursor(encodeCursor([key, offset]), query)).toThrow(otherQuery);
    expect(() => decodeSearchCursor('not a cursor', query)).toThrow(refused);
  });
});
