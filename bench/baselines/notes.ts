// The notes benchmark's server-side pieces (bench/notes.ts):
// - POST /bench/notes/seed: realistic Markdown notes written straight into the notes database, in
//   transactions of 1,000, with the same derived rows (tags, links, the search index) as the service;
// - the baselines: the same search, listing and create as the facade → gateway → notes subgraph
//   path, called on the service without GraphQL (token and revocation check included);
// - GET /bench/notes/sql: the search and tag-listing statements alone, timed in this process;
// - GET /bench/notes/sizes: the search index's size on disk, and the tables'.
import express, { Express } from 'express';
import { v7 as uuidv7 } from 'uuid';
import type { ServerInternals } from '../../bin/all-in-one';
import { loadConfig } from '../../lib/config';
import { isSqlite } from '../../lib/database/driver';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, ERROR_STATUS } from '../../lib/errors';
import { TokenVerifier } from '../../lib/tokens';
import { Note } from '../../subgraphs/notes/entities/note';
import { NoteLink, NoteTag } from '../../subgraphs/notes/entities/note-rows';
import { ensureOwnerRow, NOTES_CAP } from '../../subgraphs/notes/owner-row';
import { UserCap } from '../../lib/kit/user-caps';
import { excerptOf, titleFromBody, titleKey, wikiLinks } from '../../subgraphs/notes/markdown';
import { NoteFilter, NoteService, tagUnion } from '../../subgraphs/notes/note-service';
import { searchIndexBytes } from '../../subgraphs/notes/search';
import { sharedExpensiveGate } from '../../lib/kit/expensive';
import { sharedExpensiveReads } from '../../lib/kit/expensive-reads';
import { ownerWords } from '../../lib/kit/owner-search';

/** A deterministic generator (mulberry32). */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'te',
  'vi',
  'do',
  'pa',
  'gu',
  'ber',
  'tan',
  'sol',
  'mar',
  'lin',
  'cor',
  'dent',
];
const FOREIGN = [
  'café',
  'naïve',
  'résumé',
  'über',
  'straße',
  'año',
  'привет',
  'мир',
  'καλημέρα',
  '東京',
  'こんにちは',
  'çalış',
];
/** 2,000 words (made of syllables, a few accented or in other scripts), drawn with a Zipf-like skew. */
const VOCABULARY = (() => {
  const random = prng(7);
  const words = new Set<string>();
  while (words.size < 1990) {
    const n = 2 + Math.floor(random() * 3);
    words.add(Array.from({ length: n }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(''));
  }
  return [...words, ...FOREIGN];
})();

/** The terms the benchmark searches: `rare<k>` is in every 100th note (≤ 1,000 notes of a user), `meeting` in every 5th. */
export const rareTerm = (k: number) => `zq${k.toString(36)}rare`;
export const COMMON_TERM = 'meeting';

/** Note `i` of a seed: 200–2,000 characters of Markdown with headings, lists, hashtags, links and code. */
export function seedNote(i: number, seed: number): { title: string; body: string; pinned: boolean } {
  const random = prng(seed * 1_000_003 + i);
  const word = () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 2.5)];
  const sentence = () => {
    const words = Array.from({ length: 6 + Math.floor(random() * 12) }, word);
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    return `${words.join(' ')}.`;
  };
  const target = 200 + Math.floor(random() * 1800);
  const lines = [`# ${word()} ${word()} ${i}`, ''];
  lines.push(`${sentence()} ${rareTerm(i % 100)} #proj${i % 50} #area${i % 10}/sub${i % 7}`);
  if (i % 5 === 0) lines.push(`Notes from the ${COMMON_TERM} about ${word()}.`);
  while (lines.join('\n').length < target) {
    const r = random();
    if (r < 0.1) lines.push('', `## ${word()} ${word()}`);
    else if (r < 0.25) lines.push(`- ${sentence()}`);
    else if (r < 0.3) lines.push('```', `const ${word()} = ${Math.floor(random() * 100)}; // #notatag`, '```');
    else if (r < 0.35) lines.push(`See [[${word()} ${word()} ${Math.floor(random() * i)}]].`);
    else lines.push(sentence());
  }
  const body = lines.join('\n').slice(0, 2000);
  return { title: titleFromBody(body), body, pinned: i % 100 === 42 };
}

export function mountNotesBaseline(app: Express, { subgraphs, keys, log }: ServerInternals): void {
  const notesGraph = subgraphs.find((s) => s.name === 'notes')!;
  const dataSource = notesGraph.dataSource;
  const config = loadConfig();
  const service = new NoteService(dataSource, {
    notesPerUser: Number.MAX_SAFE_INTEGER,
    searchMaxTerms: config.SEARCH_MAX_TERMS,
    searchCandidates: config.SEARCH_CANDIDATES,
    expensive: sharedExpensiveGate(config),
    reads: sharedExpensiveReads(config),
  });
  const verifier = new TokenVerifier(keys, config.JWT_ISSUER);
  const caller = async (req: express.Request) => {
    const principal = await verifier.verifyRequest(req);
    if (await log.sessionRevoked(principal.sessionId)) throw new AppError('unauthorized');
    return principal;
  };
  const fail = (res: express.Response, err: unknown) => {
    const code = err instanceof AppError ? err.code : 'internal_error';
    res.status(ERROR_STATUS[code]).json({ error: code, message: (err as Error).message });
  };
  const filterOf = (query: express.Request['query']): NoteFilter => ({
    q: typeof query.q === 'string' ? query.q : undefined,
    tag: typeof query.tag === 'string' ? query.tag : undefined,
  });

  // Seeds `count` notes for `owner` (notes start..start+count-1 of the seed), 1,000 per transaction.
  app.post('/bench/notes/seed', express.json(), async (req, res) => {
    const { owner, start, count, seed } = req.body as { owner: string; start: number; count: number; seed: number };
    try {
      const sqlite = isSqlite(dataSource);
      let [{ next }] = await dataSource.query<{ next: number }[]>(
        'SELECT COALESCE(MAX(search_id), 0) + 1 AS next FROM notes',
      );
      next = Number(next);
      const base = Date.now() - (start + count) * 1000;
      for (let from = start; from < start + count; from += 1000) {
        const batch = Array.from({ length: Math.min(1000, start + count - from) }, (_, k) => from + k);
        await inTransaction(dataSource, async (m) => {
          const notes = batch.map((i) => {
            const { title, body, pinned } = seedNote(i, seed);
            const id = uuidv7();
            const at = new Date(base + i * 1000);
            return m.create(Note, {
              id,
              ownerId: owner,
              title,
              titleKey: titleKey(title),
              body,
              excerpt: excerptOf(body),
              folderId: null,
              givenTags: [],
              tags: tagUnion([], body),
              pinned,
              archived: false,
              archivedAt: null,
              version: 1,
              createdAt: at,
              updatedAt: at,
              searchId: sqlite ? next++ : null,
            });
          });
          await m.insert(Note, notes);
          if (sqlite)
            for (let k = 0; k < notes.length; k += 300) {
              const part = notes.slice(k, k + 300);
              await m.query(
                `INSERT INTO notes_fts (rowid, title, body) VALUES ${part.map(() => '(?, ?, ?)').join(', ')}`,
                part.flatMap((n) => [n.searchId, ownerWords(owner, n.title), ownerWords(owner, n.body)]),
              );
            }
          else
            for (const n of notes)
              await m.query('UPDATE notes SET search_words = ? WHERE id = ?', [
                `${ownerWords(owner, n.title)} ${ownerWords(owner, n.body)}`,
                n.id,
              ]);
          const tags = notes.flatMap((n) => n.tags.map((tag) => ({ noteId: n.id, tag, ownerId: owner })));
          for (let k = 0; k < tags.length; k += 1000) await m.insert(NoteTag, tags.slice(k, k + 1000));
          const links = notes.flatMap((n) =>
            wikiLinks(n.body).map((targetKey) => ({ sourceId: n.id, targetKey, ownerId: owner })),
          );
          for (let k = 0; k < links.length; k += 1000) await m.insert(NoteLink, links.slice(k, k + 1000));
        });
      }
      await ensureOwnerRow(dataSource, owner);
      await dataSource.manager.increment(UserCap, { ownerId: owner, cap: NOTES_CAP }, 'used', count);
      res.json({ seeded: count });
    } catch (err) {
      fail(res, err);
    }
  });

  // The listing and search of GET /api/v1/notes, on the service without GraphQL.
  app.get('/bench/notes', async (req, res) => {
    try {
      const principal = await caller(req);
      const page = await service.list(principal.userId, filterOf(req.query), Number(req.query.limit ?? 20));
      res.json({
        items: page.items.map(({ id, title, excerpt, tags }) => ({ id, title, excerpt, tags })),
        next_cursor: page.nextCursor,
      });
    } catch (err) {
      fail(res, err);
    }
  });

  app.post('/bench/notes', express.json({ limit: '1mb' }), async (req, res) => {
    try {
      const principal = await caller(req);
      const note = await service.create(principal.userId, { body: req.body.body, title: req.body.title });
      res.status(202).location(`/api/v1/notes/${note.id}`).json({ id: note.id, message: 'Created the note.' });
    } catch (err) {
      fail(res, err);
    }
  });

  // The statements alone: `n` runs of the listing (search or tag) for `owner`, timed here, in ms.
  app.get('/bench/notes/sql', async (req, res) => {
    try {
      const owner = typeof req.query.owner === 'string' ? req.query.owner : '';
      const n = Number(req.query.n ?? 100);
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const filter = filterOf(req.query);
        if (filter.q === 'RARE') filter.q = rareTerm(i % 100);
        const t0 = performance.now();
        await service.list(owner, filter, 20);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      res.json({ p50: times[Math.floor(n * 0.5)], p95: times[Math.floor(n * 0.95)], max: times[n - 1] });
    } catch (err) {
      fail(res, err);
    }
  });

  app.get('/bench/notes/sizes', async (_req, res) => {
    try {
      const index = await searchIndexBytes(dataSource.manager);
      let tables: number | null = null;
      if (isSqlite(dataSource)) {
        try {
          const [row] = await dataSource.query<{ bytes: number }[]>(
            "SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name NOT LIKE 'notes_fts%'",
          );
          tables = Number(row.bytes);
        } catch {
          tables = null;
        }
      } else {
        const [row] = await dataSource.query<{ bytes: number }[]>(
          'SELECT SUM(data_length + index_length) AS bytes FROM information_schema.TABLES WHERE table_schema = DATABASE()',
        );
        tables = Number(row.bytes);
      }
      res.json({ index_bytes: index, other_bytes: tables });
    } catch (err) {
      fail(res, err);
    }
  });
}
