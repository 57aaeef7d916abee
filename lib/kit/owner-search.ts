// Full-text search partitioned by owner, for every module that searches its users' texts (notes,
// the Vault). Each indexed word is written as its owner's tag followed by the word
// ("k3f9a0c1d2e4" + "cafe"), so that the terms of one user are one contiguous range of the index:
// a query for `cafe*` becomes `k3f9a0c1d2e4cafe*` and reads that user's postings only, on FTS5
// (whose terms are sorted) as on InnoDB's FULLTEXT index. One user's searches then cost what
// that user stores, never what every user stores (issue 41 finding 2, issue 44).
//
// Words are cut here, not by the database: the text is decomposed (NFKD), its marks removed
// ("café" and "cafe" are one word), lower-cased and split into runs of letters, digits and
// private-use characters, the token characters of FTS5's unicode61 (`L* N* Co`). The database's
// tokenizer then sees words it keeps whole. Tags collide only when two owners' ids hash alike
// (48 bits); the query keeps its owner filter, so a collision costs time, never another's rows.
import { createHash } from 'node:crypto';
import { validationError } from '../errors';

/** Hex digits of an owner's tag. */
export const OWNER_TAG_LENGTH = 12;
/** Characters of a word kept (InnoDB indexes tokens of at most 84 characters, tag included). */
export const MAX_WORD_CHARS = 64;

export function ownerTag(ownerId: string): string {
  return createHash('sha256').update(ownerId).digest('hex').slice(0, OWNER_TAG_LENGTH);
}

const NOT_WORD = /[^\p{L}\p{N}\p{Co}]+/u;
const MARKS = /\p{M}+/gu;

/** The words of a text as the index keeps them. */
export function searchWords(text: string | null | undefined): string[] {
  if (!text) return [];
  return text
    .normalize('NFKD')
    .replace(MARKS, '')
    .toLowerCase()
    .split(NOT_WORD)
    .filter(Boolean)
    .map((w) => (w.length > MAX_WORD_CHARS ? [...w].slice(0, MAX_WORD_CHARS).join('') : w));
}

/** What is written to the index for the owner's texts: each word behind the owner's tag, space-separated. */
export function ownerWords(ownerId: string, ...texts: (string | null | undefined)[]): string {
  const tag = ownerTag(ownerId);
  const out: string[] = [];
  for (const text of texts) for (const word of searchWords(text)) out.push(tag + word);
  return out.join(' ');
}

export interface SearchTerm {
  /** Quoted: its words in this order. Otherwise one word, matched as a word or the start of one. */
  phrase: boolean;
  words: string[];
}

export interface QueryRules {
  /** Characters of `q`. */
  maxLength: number;
  /** Words and phrases of `q` (SEARCH_MAX_TERMS); more are refused, not cut, so that a caller knows. */
  maxTerms: number;
}

/**
 * The terms of `q`: "quoted" text is a phrase, the rest words (a word the index cuts in several
 * is a phrase of them). A term with no letter or digit is left out. Too long a query or too many
 * terms: 400 `validation_error` naming `q`.
 */
export function parseSearchQuery(q: string, rules: QueryRules): SearchTerm[] {
  if ([...q].length > rules.maxLength) throw validationError({ q: [`must be at most ${rules.maxLength} characters`] });
  const terms: SearchTerm[] = [];
  const pattern = /"([^"]*)"|([^\s"]+)/g;
  for (let m = pattern.exec(q); m; m = pattern.exec(q)) {
    const words = searchWords(m[1] ?? m[2]);
    if (words.length) terms.push({ phrase: m[1] !== undefined || words.length > 1, words });
  }
  if (terms.length > rules.maxTerms)
    throw validationError(
      { q: [`may have at most ${rules.maxTerms} words and phrases (SEARCH_MAX_TERMS); it has ${terms.length}`] },
      'The search has too many terms.',
    );
  return terms;
}

/** FTS5: every term, words as prefixes, phrases as phrases, all within the owner's range (each word quoted: no operator gets through). */
export function fts5OwnerQuery(ownerId: string, terms: SearchTerm[]): string {
  const tag = ownerTag(ownerId);
  return terms
    .map((t) => (t.phrase ? `"${t.words.map((w) => tag + w).join(' ')}"` : `"${tag}${t.words[0]}"*`))
    .join(' AND ');
}

/** InnoDB's boolean mode: every term required (+), words as prefixes (*), phrases quoted. */
export function booleanModeOwnerQuery(ownerId: string, terms: SearchTerm[]): string {
  const tag = ownerTag(ownerId);
  return terms
    .map((t) => (t.phrase ? `+"${t.words.map((w) => tag + w).join(' ')}"` : `+${tag}${t.words[0]}*`))
    .join(' ');
}
