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
    if (!(weight > 0) || weight > MAX_BLEND_WEIGHT) return problems.push(`the weight of "${m[1]}" must be a number above 0 and at most ${MAX_BLEND_WEIGHT}`);
    parts.push({ voice: m[1], weight });
  });
  return problems.length ? { problems } : { parts };
}
