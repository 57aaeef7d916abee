// Word timings from eSpeak NG's own word events: each tells where the word starts in the text
// (1-based, in code points) and its length, and when it starts in the rendered audio (ms).
// The stretch plays the rendered audio `tempo` times faster, so its times are divided by it;
// resampling keeps times. A word ends where the next starts, the last at the end of the audio.
//
// The engine's positions are not exact: after a sentence end followed by `<` it reports the
// next word one character late (`old` for `Bold`), it counts a sentence's closing stop into its
// last word, and around markup it can land on a space. So each reported word is snapped to the
// word of the text it falls in: a run of characters between spaces and markup tags, without the
// punctuation around it (`Bold?` → `Bold`; an entity such as `&amp;`, or a word that is all
// punctuation such as `&`, stays whole).
import type { SpeechTimings } from './speech-engine';

const SPACE = /\s/u;
const PUNCTUATION = /\p{P}/u;
const ENTITY_AT_START = /^&(?:#\d+|#x[\da-f]+|[a-z][a-z\d]*);/i;
const ENTITY_AT_END = /&(?:#\d+|#x[\da-f]+|[a-z][a-z\d]*);$/i;

interface TextWord {
  /** The word without the punctuation around it, in code points. */
  start: number;
  end: number;
  /** Where its run of non-space characters begins (markup before it included): a sentence's cue starts there. */
  chunkStart: number;
}

/** Which code points belong to a markup tag (`<b>`, `</i>`, `<a href="…">`): they separate words. */
function tagMask(chars: string[]): boolean[] {
  const inTag = new Array<boolean>(chars.length).fill(false);
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] !== '<' || !/[A-Za-z/!]/.test(chars[i + 1] ?? '')) continue;
    let j = i + 1;
    while (j < chars.length && chars[j] !== '>' && chars[j] !== '<') j++;
    if (chars[j] !== '>') continue;
    for (let k = i; k <= j; k++) inTag[k] = true;
    i = j;
  }
  return inTag;
}

/** The words of the text, in order, and which word each code point's run belongs to (-1: a space or a tag). */
export function textWords(chars: string[]): { words: TextWord[]; wordOf: Int32Array } {
  const inTag = tagMask(chars);
  const words: TextWord[] = [];
  const wordOf = new Int32Array(chars.length).fill(-1);
  let chunkStart = 0;
  for (let i = 0; i < chars.length;) {
    if (SPACE.test(chars[i])) {
      chunkStart = ++i;
      continue;
    }
    if (inTag[i]) {
      i++;
      continue;
    }
    let end = i;
    while (end < chars.length && !SPACE.test(chars[end]) && !inTag[end]) wordOf[end++] = words.length;
    const run = chars.slice(i, end).join('');
    let [a, b] = [i, end];
    if (!ENTITY_AT_START.test(run)) while (a < b && PUNCTUATION.test(chars[a])) a++;
    if (!ENTITY_AT_END.test(run)) while (b > a && PUNCTUATION.test(chars[b - 1])) b--;
    words.push(a < b ? { start: a, end: b, chunkStart } : { start: i, end, chunkStart });
    i = end;
  }
  return { words, wordOf };
}

/**
 * The text word a reported position stands for, or -1 when it is one already taken (`taken`:
 * the last word kept): the word it falls in; on a space or a tag, the word just before it when
 * that one is not taken yet (reported late), else the next one (reported early).
 */
function wordAt(wordOf: Int32Array, position: number, taken: number): number {
  const at = position < wordOf.length ? wordOf[position] : -1;
  if (at !== -1) return at > taken ? at : -1;
  const before = position > 0 ? wordOf[position - 1] : -1;
  if (before > taken) return before;
  for (let p = position + 1; p < wordOf.length; p++) if (wordOf[p] !== -1) return wordOf[p] > taken ? wordOf[p] : -1;
  return -1;
}

/**
 * `words` and `sentences` are flat triples as the engine thread gathers them: [position,
 * length, ms]. Words the engine reports twice (it does for some numbers), or several times
 * within one word of the text, are kept once, and times never go backwards or past the audio.
 */
export function wordTimings(
  text: string,
  words: number[],
  sentences: number[],
  tempo: number,
  durationMs: number,
): SpeechTimings {
  const chars = [...text];
  const characters = chars.length;
  const end = Math.round(durationMs);
  const { words: inText, wordOf } = textWords(chars);
  const out: SpeechTimings['words'] = [];
  /** Each kept word's position as the engine reported it, to place the sentences the same way. */
  const reported: number[] = [];
  const chunkOf: number[] = [];
  let taken = -1;
  for (let i = 0; i + 2 < words.length; i += 3) {
    const position = Math.min(characters, Math.max(0, words[i] - 1));
    const w = wordAt(wordOf, position, taken);
    if (w === -1) continue; // the same word again, or one inside it
    const startMs = Math.min(end, Math.round(words[i + 2] / tempo));
    const last = out[out.length - 1];
    taken = w;
    out.push({
      startMs: Math.max(startMs, last?.startMs ?? 0),
      endMs: end,
      charStart: inText[w].start,
      charEnd: inText[w].end,
    });
    reported.push(position);
    chunkOf.push(inText[w].chunkStart);
  }
  for (let i = 0; i + 1 < out.length; i++) out[i].endMs = out[i + 1].startMs;
  // A sentence starts where its first word's run of characters does (markup before the word included).
  const sentenceStarts: number[] = [];
  for (let i = 0; i + 2 < sentences.length; i += 3) {
    const position = Math.min(characters, Math.max(0, sentences[i] - 1));
    const first = reported.findIndex((p) => p >= position);
    const at = first === -1 ? position : Math.min(chunkOf[first], position);
    if (!sentenceStarts.length || at > sentenceStarts[sentenceStarts.length - 1]) sentenceStarts.push(at);
  }
  return { words: out, sentenceStarts };
}
