// Classification, in three layers (docs/vault.md): the user's rules in priority order, then the
// user's learned classifier (naive Bayes, wink-naive-bayes-text-classifier, trained on the items
// whose category the user set by hand and stored per user in the vault database), then up to N
// keyword tags from the text (keyword-extractor's stop words). Nothing here calls out to a network.
import type KeywordExtractor from 'keyword-extractor';
import type NaiveBayes from 'wink-naive-bayes-text-classifier';
import { ClassifiedBy, TagSource, VaultItem, VaultTag } from './entities/vault-item';
import type { VaultRule } from './entities/vault-rule';
import { compileGlob, CompiledGlob, GlobSyntaxError } from './url-glob';

/** Text read per item for learning, predicting and keywords: the start says what a page is about. */
const TEXT_READ = 20_000;
/** Distinct words a document contributes to the model. */
const WORDS_PER_DOCUMENT = 500;

// Loaded on first use (a process that classifies nothing does not hold their word lists: issue 44).
/* eslint-disable @typescript-eslint/no-require-imports */
let extractor: typeof KeywordExtractor | undefined;
const keywordExtractor = () => (extractor ??= require('keyword-extractor') as typeof KeywordExtractor); // CommonJS: no `default`
const naiveBayes = (): ReturnType<typeof NaiveBayes> =>
  (require('wink-naive-bayes-text-classifier') as typeof NaiveBayes)();
/* eslint-enable @typescript-eslint/no-require-imports */

let LANGUAGES: Set<string> | undefined;
const languageOf = (item: Pick<VaultItem, 'language'>) => {
  const code = (item.language ?? 'en').slice(0, 2).toLowerCase();
  return (LANGUAGES ??= new Set(keywordExtractor().supported_language_codes)).has(code) ? code : 'en';
};
const stopwordSets = new Map<string, Set<string>>();
function stopwords(language: string): Set<string> {
  let set = stopwordSets.get(language);
  if (!set)
    stopwordSets.set(language, (set = new Set(keywordExtractor().getStopwords({ language: language as never }))));
  return set;
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}_'-]*/gu;

/** The words of an item the classifier sees: lower case, no stop words, no numbers, at most WORDS_PER_DOCUMENT. */
export function documentWords(item: Pick<VaultItem, 'title' | 'text' | 'description' | 'url' | 'language'>): string[] {
  const stop = stopwords(languageOf(item));
  const host = item.url ? safeHost(item.url) : null;
  const source = [item.title, item.description, item.text?.slice(0, TEXT_READ)].filter(Boolean).join(' ').toLowerCase();
  const words: string[] = host ? [`host:${host}`] : [];
  for (const [word] of source.matchAll(WORD)) {
    if (word.length < 2 || stop.has(word) || /^\d+$/.test(word)) continue;
    words.push(word);
    if (words.length >= WORDS_PER_DOCUMENT) break;
  }
  return words;
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

// ---- rules -------------------------------------------------------------------------------

// Compiled globs by text (an automaton, linear in the URL: url-glob.ts). A glob stored before
// this matcher refused its syntax (parentheses, brace ranges) matches nothing: null.
const globs = new Map<string, CompiledGlob | null>();
function glob(pattern: string): CompiledGlob | null {
  let matcher = globs.get(pattern);
  if (matcher === undefined) {
    if (globs.size > 10_000) globs.clear();
    try {
      matcher = compileGlob(pattern);
    } catch (err) {
      if (!(err instanceof GlobSyntaxError)) throw err;
      matcher = null;
    }
    globs.set(pattern, matcher);
  }
  return matcher;
}

export function ruleMatches(rule: VaultRule, item: VaultItem): boolean {
  const w = rule.when;
  if (w.kind && item.kind !== w.kind) return false;
  if (w.urlHost) {
    const host = item.url ? safeHost(item.url) : null;
    const wanted = w.urlHost.toLowerCase();
    if (!host || (host !== wanted && !host.endsWith(`.${wanted}`))) return false;
  }
  if (w.urlMatches && (!item.url || !glob(w.urlMatches)?.match(item.url))) return false;
  if (w.mediaType) {
    const type = (item.mediaType ?? '').toLowerCase();
    const wanted = w.mediaType.toLowerCase();
    if (wanted.endsWith('/*') ? !type.startsWith(wanted.slice(0, -1)) : type !== wanted) return false;
  }
  if (w.textContains?.length) {
    const haystack = [item.title, item.description, item.text?.slice(0, 200_000)]
      .filter(Boolean)
      .join('\n')
      .toLowerCase();
    if (!w.textContains.some((needle) => haystack.includes(needle.toLowerCase()))) return false;
  }
  return true;
}

// ---- the learned classifier ---------------------------------------------------------------

/** A user's model as stored: the library's export and how many items of each category it learned. */
export interface StoredModel {
  model: string;
  labelCounts: Record<string, number>;
}

/** Learns and unlearns on the library's exported counts (it can learn after an import, but not forget). */
export function trainModel(
  stored: StoredModel | null,
  changes: { words: string[]; learn: string | null; unlearn: string | null }[],
): StoredModel {
  const classifier = naiveBayes();
  classifier.defineConfig({ considerOnlyPresence: true, smoothingFactor: 0.5 });
  classifier.definePrepTasks([(words) => words]);
  if (stored) classifier.importJSON(stored.model);
  const labelCounts = { ...(stored?.labelCounts ?? {}) };
  for (const change of changes) {
    if (change.unlearn && labelCounts[change.unlearn]) {
      const [config, samples, count, words, vocabulary] = JSON.parse(classifier.exportJSON()) as [
        unknown,
        Record<string, number>,
        Record<string, Record<string, number>>,
        Record<string, number>,
        string[],
      ];
      const label = change.unlearn;
      samples[label] = Math.max(0, (samples[label] ?? 0) - 1);
      for (const word of new Set(change.words)) {
        if (count[label]?.[word]) {
          count[label][word] -= 1;
          words[label] -= 1;
          if (!count[label][word]) delete count[label][word];
        }
      }
      if (!samples[label]) {
        delete samples[label];
        delete count[label];
        delete words[label];
      }
      classifier.importJSON(JSON.stringify([config, samples, count, words, vocabulary]));
      labelCounts[label] -= 1;
      if (!labelCounts[label]) delete labelCounts[label];
    }
    if (change.learn && change.words.length) {
      classifier.learn(change.words, change.learn);
      labelCounts[change.learn] = (labelCounts[change.learn] ?? 0) + 1;
    }
  }
  return { model: classifier.exportJSON(), labelCounts };
}

export interface Prediction {
  category: string;
  confidence: number;
}

/** A model ready to predict, built once per stored version (a process caches them). */
export class Predictor {
  private readonly classifier = naiveBayes();
  readonly usable: boolean;

  constructor(stored: StoredModel, minItems: number) {
    const counts = Object.values(stored.labelCounts);
    const total = counts.reduce((a, b) => a + b, 0);
    this.classifier.defineConfig({ considerOnlyPresence: true, smoothingFactor: 0.5 });
    this.classifier.definePrepTasks([(words) => words]);
    this.classifier.importJSON(stored.model);
    let usable = total >= minItems && counts.filter((n) => n > 0).length >= 2;
    if (usable) {
      try {
        this.classifier.consolidate();
      } catch {
        usable = false; // e.g. a vocabulary under the library's minimum
      }
    }
    this.usable = usable;
  }

  /** The best category and its confidence: the log2 odds of it against the others, as a probability. */
  predict(words: string[]): Prediction | null {
    if (!this.usable || !words.length) return null;
    const [[category, odds]] = this.classifier.computeOdds([...new Set(words)]);
    if (category === 'unknown' && odds === 0) return null;
    const confidence = 1 / (1 + 2 ** -odds);
    return { category, confidence: Math.round(confidence * 1000) / 1000 };
  }
}

// ---- keywords ----------------------------------------------------------------------------

const TAG_TEXT = /^[\p{L}\p{N}][\p{L}\p{N}_-]{1,49}$/u;

/** Up to `count` keywords of the text: its most frequent words that are not stop words. */
export function keywords(
  item: Pick<VaultItem, 'title' | 'text' | 'description' | 'language'>,
  count: number,
): string[] {
  if (count <= 0) return [];
  const text = [item.title, item.description, item.text?.slice(0, TEXT_READ)].filter(Boolean).join('\n');
  if (!text) return [];
  const words = keywordExtractor().extract(text, {
    language: languageOf(item) as never,
    remove_digits: true,
    return_changed_case: true,
    remove_duplicates: false,
  });
  const frequency = new Map<string, number>();
  for (const raw of words) {
    const word = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (word.length < 3 || !TAG_TEXT.test(word)) continue;
    frequency.set(word, (frequency.get(word) ?? 0) + 1);
  }
  // Most frequent first; ties keep the order of first appearance (Map order, stable sort).
  return [...frequency.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([word]) => word);
}

// ---- all three ---------------------------------------------------------------------------

export interface Classification {
  category: string | null;
  classifiedBy: ClassifiedBy | null;
  classifiedRuleId: string | null;
  classifiedConfidence: number | null;
  tags: VaultTag[];
  favorite: boolean;
  archived: boolean;
}

/**
 * Classifies an item afresh: the user's own tags and a category the user set stay; rule and
 * automatic tags, and a category decided by a rule or the classifier, are decided again.
 */
export function classify(
  item: VaultItem,
  rules: VaultRule[],
  predictor: Predictor | null,
  options: { minConfidence: number; keywordTags: number },
): Classification {
  const userTags = item.tags.filter((t) => t.source === TagSource.USER);
  const tags = new Map<string, VaultTag>(userTags.map((t) => [t.name, t]));
  const byUser = item.classifiedBy === ClassifiedBy.USER;
  const result: Classification = {
    category: byUser ? item.category : null,
    classifiedBy: byUser ? ClassifiedBy.USER : null,
    classifiedRuleId: null,
    classifiedConfidence: null,
    tags: [],
    favorite: item.favorite,
    archived: item.archived,
  };
  for (const rule of rules) {
    if (!ruleMatches(rule, item)) continue;
    const then = rule.then;
    if (then.category && !result.classifiedBy) {
      result.category = then.category;
      result.classifiedBy = ClassifiedBy.RULE;
      result.classifiedRuleId = rule.id;
    }
    for (const name of then.tags ?? []) if (!tags.has(name)) tags.set(name, { name, source: TagSource.RULE });
    if (then.favorite != null) result.favorite = then.favorite;
    if (then.archive != null) result.archived = then.archive;
  }
  if (!result.classifiedBy && predictor) {
    const prediction = predictor.predict(documentWords(item));
    if (prediction && prediction.confidence >= options.minConfidence) {
      result.category = prediction.category;
      result.classifiedBy = ClassifiedBy.AUTO;
      result.classifiedConfidence = prediction.confidence;
    }
  }
  let added = 0;
  for (const name of keywords(item, options.keywordTags + tags.size)) {
    if (added >= options.keywordTags) break;
    if (tags.has(name)) continue;
    tags.set(name, { name, source: TagSource.AUTO });
    added++;
  }
  result.tags = [...tags.values()].slice(0, 50);
  return result;
}
