// Word timings and WebVTT captions of texts with markup, entities and emoji around sentence
// ends, rendered by the real engine: every word is where the text has it (eSpeak NG reports the
// word after a sentence end followed by `<` one character late), and the captions pass a strict
// reading of the WebVTT format (below) whose cue texts, decoded, are the text as written.
import { EspeakEngine } from '../../subgraphs/tts/engine/espeak';
import { storedTimings, webVtt, wordTimings } from '../../subgraphs/tts/synthesis-timings';

const engine = new EspeakEngine(1);
afterAll(() => engine.stop());

async function captions(text: string) {
  const audio = await engine.synthesize(
    { text, baseVoice: 'f3', voiceBlend: null, language: 'en-us', speed: 1 },
    { maxSeconds: 60 },
  );
  const stored = storedTimings(audio.timings)!;
  return { words: wordTimings(text, stored), vtt: webVtt(text, stored) };
}

interface Cue {
  startMs: number;
  endMs: number;
  text: string;
}

const TIME = /^(?:(\d{2,}):)?([0-5]\d):([0-5]\d)\.(\d{3})$/;
const ms = (t: string) => {
  const m = TIME.exec(t);
  if (!m) throw new Error(`"${t}" is not a WebVTT timestamp`);
  return ((Number(m[1] ?? 0) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000 + Number(m[4]);
};
const REFERENCES: Record<string, string> = { amp: '&', lt: '<', gt: '>', lrm: '\u200e', rlm: '\u200f', nbsp: '\u00a0' };

/**
 * A strict reading of a WebVTT file (w3.org/TR/webvtt1): the signature line, then cues separated
 * by blank lines, each an optional identifier, a timing line (start ≤ end, starts in order) and
 * text lines. Cue text must hold no markup at all (no `<`: the captions are plain text) and
 * every `&` must begin a character reference WebVTT knows; the text is returned decoded.
 */
function strictWebVtt(file: string): Cue[] {
  if (file.includes('\r') || file.includes('\0')) throw new Error('CR or NUL in the file');
  const blocks = file.split(/\n{2,}/);
  if (!/^WEBVTT(?:[ \t][^\n]*)?$/.test(blocks[0])) throw new Error(`bad signature: ${JSON.stringify(blocks[0])}`);
  if (!file.endsWith('\n')) throw new Error('the file does not end with a line break');
  const cues: Cue[] = [];
  for (const block of blocks.slice(1).filter((b) => b !== '')) {
    const lines = block.replace(/\n$/, '').split('\n');
    if (!lines[0].includes('-->')) lines.shift(); // the identifier
    const timing = /^(\S+)[ \t]+-->[ \t]+(\S+)(?:[ \t].*)?$/.exec(lines.shift() ?? '');
    if (!timing) throw new Error(`no timing line in ${JSON.stringify(block)}`);
    const [startMs, endMs] = [ms(timing[1]), ms(timing[2])];
    if (endMs < startMs) throw new Error(`a cue ends before it starts: ${timing[0]}`);
    if (cues.length && startMs < cues[cues.length - 1].startMs) throw new Error('cues out of order');
    if (!lines.length || lines.some((l) => l === '' || l.includes('-->'))) throw new Error(`bad cue text in ${block}`);
    const raw = lines.join('\n');
    if (raw.includes('<')) throw new Error(`markup in cue text: ${JSON.stringify(raw)}`);
    const text = raw.replace(/&([^;\s&<]*);?/g, (whole, name: string) => {
      const numeric = /^#(?:x([\da-f]+)|(\d+))$/i.exec(name);
      if (numeric && whole.endsWith(';'))
        return String.fromCodePoint(parseInt(numeric[1] ?? numeric[2], numeric[1] ? 16 : 10));
      if (Object.hasOwn(REFERENCES, name) && whole.endsWith(';')) return REFERENCES[name];
      throw new Error(`"${whole}" in cue text is not a character reference`);
    });
    cues.push({ startMs, endMs, text });
  }
  return cues;
}

const CASES: [string, string[]][] = [
  ['Tabs. <b>Bold?</b> & more.', ['Tabs', 'Bold', '&', 'more']],
  [
    'One. <b>Two</b> three. <i>Four</i>. Five six. <u>Seven</u>!',
    ['One', 'Two', 'three', 'Four', 'Five', 'six', 'Seven'],
  ],
  ['Tabs. &amp; <i>x</i> 😀. <b>Bold</b> end.', ['Tabs', '&amp;', 'x', '😀', 'Bold', 'end']],
  ['Wait… 👍🏽 <em>Yes</em>. «Quoted» — ok. Then <i>some</i> text, and more. <b>x</b> y.', []],
];

describe('word timings and WebVTT around markup, entities and emoji', () => {
  it.each(CASES)(
    '%s: each word where the text has it; the captions read strictly as the text',
    async (text, expected) => {
      const { words, vtt } = await captions(text);
      const chars = [...text];
      // Each word is the text at its offsets, a whole word: not cut, not holding a space or markup.
      for (const w of words) {
        expect(w.word).toBe(chars.slice(w.charStart, w.charEnd).join(''));
        expect(w.word).not.toMatch(/[\s<>]/);
        const before = chars[w.charStart - 1] ?? ' ';
        expect(/[\p{L}\p{N}]/u.test(before) && /^[\p{L}\p{N}]/u.test(w.word)).toBe(false);
        const after = chars[w.charEnd] ?? ' ';
        expect(/[\p{L}\p{N}]/u.test(after) && /[\p{L}\p{N}]$/u.test(w.word)).toBe(false);
      }
      if (expected.length) expect(words.map((w) => w.word)).toEqual(expected);
      for (let i = 1; i < words.length; i++) expect(words[i].charStart).toBeGreaterThanOrEqual(words[i - 1].charEnd);

      const cues = strictWebVtt(vtt);
      expect(cues.length).toBeGreaterThan(1);
      // Decoded, the cues are the text as written, markup and entities included, in order.
      expect(cues.map((c) => c.text).join(' ')).toBe(text.replace(/\s+/g, ' ').trim());
      expect(cues[0].startMs).toBe(words[0].startMs);
      expect(cues[cues.length - 1].endMs).toBe(words[words.length - 1].endMs);
    },
  );

  it('places `Bold` at 9–13 in "Tabs. <b>Bold?</b> & more." and escapes its cues', async () => {
    const { words, vtt } = await captions('Tabs. <b>Bold?</b> & more.');
    expect(words[1]).toMatchObject({ word: 'Bold', charStart: 9, charEnd: 13 });
    expect(vtt).toContain('\n&lt;b&gt;Bold?&lt;/b&gt;\n');
    expect(vtt).toContain('\n&amp; more.\n');
  });

  it('reads its own strictness: markup, a bare ampersand and a reversed cue are refused', () => {
    const file = (text: string, times = '00:00.000 --> 00:01.000') => `WEBVTT\n\n1\n${times}\n${text}\n`;
    expect(strictWebVtt(file('a &lt;b&gt; &amp; c'))[0].text).toBe('a <b> & c');
    expect(() => strictWebVtt(file('<b>Bold</b>'))).toThrow(/markup/);
    expect(() => strictWebVtt(file('this & that'))).toThrow(/character reference/);
    expect(() => strictWebVtt(file('x', '00:02.000 --> 00:01.000'))).toThrow(/ends before/);
    expect(() => strictWebVtt('WEBVTTX\n\n')).toThrow(/signature/);
  });
});
