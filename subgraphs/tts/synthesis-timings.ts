// A synthesis's word timings: stored as compact JSON with the synthesis when it succeeds,
// answered as `[{ word, start_ms, end_ms, char_start, char_end }]` (the words cut from its text
// by code points) or as WebVTT captions, one cue per sentence.
import type { SpeechTimings } from './engine/speech-engine';

/** One word as REST and GraphQL answer it. */
export interface WordTimingView {
  word: string;
  startMs: number;
  endMs: number;
  charStart: number;
  charEnd: number;
}

/** `{ w: [[start_ms, end_ms, char_start, char_end], …], s: [sentence char starts] }`; null without timings. */
export function storedTimings(timings: SpeechTimings | undefined): string | null {
  if (!timings) return null;
  return JSON.stringify({
    w: timings.words.map((w) => [w.startMs, w.endMs, w.charStart, w.charEnd]),
    s: timings.sentenceStarts,
  });
}

function parsed(stored: string): { w: [number, number, number, number][]; s: number[] } {
  return JSON.parse(stored) as { w: [number, number, number, number][]; s: number[] };
}

export function wordTimings(text: string, stored: string): WordTimingView[] {
  const chars = [...text];
  return parsed(stored).w.map(([startMs, endMs, charStart, charEnd]) => ({
    word: chars.slice(charStart, charEnd).join(''),
    startMs,
    endMs,
    charStart,
    charEnd,
  }));
}

/** 01:02:03.456 */
const vttTime = (ms: number) => {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
};

/**
 * Cue text as WebVTT reads it: `&`, `<` and `>` escaped, so that text that looks like markup or
 * an entity (`<b>`, `&amp;`) is shown as written rather than read as cue markup ("-->" cannot
 * appear then either).
 */
const cueText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * WebVTT: one cue per sentence (as the engine divided them), from its first word's start to its
 * last word's end, its text the sentence as written, escaped (line breaks folded: a cue's text
 * may not hold an empty line).
 */
export function webVtt(text: string, stored: string): string {
  const words = wordTimings(text, stored);
  const starts = parsed(stored).s;
  const chars = [...text];
  const cues: string[] = [];
  let i = 0;
  for (let k = 0; k <= starts.length && i < words.length; k++) {
    const until = k + 1 < starts.length ? starts[k + 1] : Infinity;
    const first = i;
    while (i < words.length && words[i].charStart < until) i++;
    if (i === first) continue;
    const [a, b] = [words[first], words[i - 1]];
    // From where the sentence starts (markup before its first word included) to where the next
    // one does: the closing punctuation is the sentence's too.
    const from = Math.min(a.charStart, k < starts.length ? Math.max(starts[k], 0) : a.charStart);
    const written = chars
      .slice(from, Math.max(b.charEnd, Math.min(until, chars.length)))
      .join('')
      .replace(/\s+/g, ' ')
      .trim();
    cues.push(`${cues.length + 1}\n${vttTime(a.startMs)} --> ${vttTime(b.endMs)}\n${cueText(written)}`);
  }
  return `WEBVTT\n\n${cues.join('\n\n')}\n`;
}
