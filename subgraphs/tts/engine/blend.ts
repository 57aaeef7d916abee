// Voice blend expressions: base voice names joined by `+`, each optionally weighted as
// `name(weight)`, e.g. `f3(2)+m3(1)`. Parsing is the engine-independent half of the check;
// whether each name is a base voice is asked of the engine's catalog.

export interface BlendPart {
  voice: string;
  weight: number;
}

export const MAX_BLEND_PARTS = 8;
export const MAX_BLEND_WEIGHT = 100;

const PART = /^([A-Za-z0-9_-]+)(?:\((\d+(?:\.\d+)?)\))?$/;

/** The parts of an expression, or the reasons it is malformed. */
export function parseBlend(expression: string): { parts: BlendPart[] } | { problems: string[] } {
  const pieces = expression.split('+').map((p) => p.trim());
  const problems: string[] = [];
  const parts: BlendPart[] = [];
  if (pieces.length > MAX_BLEND_PARTS) problems.push(`a blend has at most ${MAX_BLEND_PARTS} parts`);
  pieces.forEach((piece, i) => {
    if (!piece) return problems.push(`part ${i + 1} is empty`);
    const m = PART.exec(piece.replace(/\s+/g, ''));
    if (!m) return problems.push(`part ${i + 1} ("${piece}") is not name or name(weight)`);
    const weight = m[2] === undefined ? 1 : Number(m[2]);
    if (!(weight > 0) || weight > MAX_BLEND_WEIGHT)
      return problems.push(`the weight of "${m[1]}" must be a number above 0 and at most ${MAX_BLEND_WEIGHT}`);
    parts.push({ voice: m[1], weight });
  });
  return problems.length ? { problems } : { parts };
}

/**
 * Settings eSpeak NG gives a voice when its variant file does not set them (voices.c,
 * VoiceReset), in variant-file units: a part without a line counts with these.
 */
const ENGINE_DEFAULTS: Record<string, number[]> = {
  pitch: [80, 118],
  echo: [0, 0],
  flutter: [2],
  roughness: [2],
  voicing: [100],
  consonants: [90, 100],
  breath: [0, 0, 0, 0, 0, 0, 0, 0],
  breathw: [200, 200, 400, 400, 400, 600, 600, 600],
};
const FORMANT_DEFAULT = [100, 100, 100, 0]; // frequency, height, width (percent), added Hz

/** A variant file's setting lines, keyed (`formant 3` per formant): numbers, or the raw text of the rest. */
function settings(text: string): Map<string, string[]> {
  const lines = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line || line.startsWith('#')) continue;
    const [keyword, ...args] = line.split(/\s+/);
    if (keyword === 'name' || keyword === 'language') continue;
    lines.set(keyword === 'formant' ? `formant ${args.shift()}` : keyword, args);
  }
  return lines;
}

const isNumeric = (args: string[]) => args.length > 0 && args.every((a) => /^-?\d+(\.\d+)?$/.test(a));

/**
 * A new eSpeak NG variant file blending weighted variant files: every numeric setting is the
 * weighted average of the parts' values (a part that does not set it counts with the engine's
 * default), so the blend's pitch lies between its parts'. Settings that are not quantities
 * (tone, intonation, klatt, stress tables, gender) come from the heaviest part that sets them.
 */
export function blendVariantFiles(name: string, parts: { text: string; weight: number }[]): string {
  const parsed = parts.map((p) => ({ weight: p.weight, lines: settings(p.text) })).sort((a, b) => b.weight - a.weight);
  const total = parsed.reduce((sum, p) => sum + p.weight, 0);
  const keys = [...new Set(parsed.flatMap((p) => [...p.lines.keys()]))].sort();
  const out = [`name ${name}`, 'language variant'];
  for (const key of keys) {
    const fallback = key.startsWith('formant ') ? FORMANT_DEFAULT : ENGINE_DEFAULTS[key];
    const values = parsed.map((p) => p.lines.get(key));
    if (fallback && values.every((v) => v === undefined || isNumeric(v))) {
      const blended = fallback.map((def, i) =>
        Math.round(parsed.reduce((sum, p, j) => sum + p.weight * Number(values[j]?.[i] ?? def), 0) / total),
      );
      out.push(`${key} ${blended.join(' ')}`);
    } else {
      out.push(`${key} ${values.find((v) => v !== undefined)!.join(' ')}`);
    }
  }
  return `${out.join('\n')}\n`;
}
