// Word timings from eSpeak NG's own word events: each tells where the word starts in the text
// (1-based, in code points) and its length, and when it starts in the rendered audio (ms).
// The stretch plays the rendered audio `tempo` times faster, so its times are divided by it;
// resampling keeps times. A word ends where the next starts, the last at the end of the audio.
import type { SpeechTimings } from './speech-engine';

/**
 * `words` and `sentences` are flat triples as the engine thread gathers them: [position,
 * length, ms]. Words the engine reports twice (it does for some numbers) are kept once, and
 * times never go backwards or past the audio.
 */
export function wordTimings(
  text: string,
  words: number[],
  sentences: number[],
  tempo: number,
  durationMs: number,
): SpeechTimings {
  const characters = [...text].length;
  const end = Math.round(durationMs);
  const out: SpeechTimings['words'] = [];
  for (let i = 0; i + 2 < words.length; i += 3) {
    const charStart = Math.min(characters, Math.max(0, words[i] - 1));
    const charEnd = Math.min(characters, charStart + Math.max(0, words[i + 1]));
    const startMs = Math.min(end, Math.round(words[i + 2] / tempo));
    const last = out[out.length - 1];
    if (last && charStart < last.charEnd) continue; // the same word again, or one inside it
    if (charEnd <= charStart) continue;
    out.push({ startMs: Math.max(startMs, last?.startMs ?? 0), endMs: end, charStart, charEnd });
  }
  for (let i = 0; i + 1 < out.length; i++) out[i].endMs = out[i + 1].startMs;
  const sentenceStarts: number[] = [];
  for (let i = 0; i + 2 < sentences.length; i += 3) {
    const at = Math.min(characters, Math.max(0, sentences[i] - 1));
    if (!sentenceStarts.length || at > sentenceStarts[sentenceStarts.length - 1]) sentenceStarts.push(at);
  }
  return { words: out, sentenceStarts };
}
