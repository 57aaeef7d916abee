// How large a JSON answer will be, counted before it is serialised: a walk over the result
// that adds up what each value needs at least (a string its characters and quotes, a key its
// name, quotes and colon) and stops as soon as the total passes the limit. No string is built,
// so an answer of hundreds of megabytes is refused without first being made.
import { AppError } from './errors';

const sizes = new WeakMap<readonly unknown[], number>();

/** Remembers what `value` (an array never changed afterwards) counts for in jsonExceeds (./json-text.ts). */
export function rememberJsonSize(value: readonly unknown[], size: number): void {
  sizes.set(value, size);
}

/**
 * True when `value` as JSON would take more than `limit` bytes (a lower bound: escapes are not
 * counted). An array whose size was remembered (./json-text.ts) counts for that size, unwalked.
 */
export function jsonExceeds(value: unknown, limit: number): boolean {
  return jsonAtLeast(value, limit) > limit;
}

const frozenSizes = new WeakMap<object, number>();

/**
 * What a frozen object of scalars counts for, found once (a kept hub graph's node or edge, which
 * many answers hold: a neighbours answer picks up to 1,500 of them); undefined for any other object.
 */
function frozenScalarsSize(v: object): number | undefined {
  const known = frozenSizes.get(v);
  if (known !== undefined || !Object.isFrozen(v)) return known;
  let size = 2;
  for (const key in v) {
    const x = (v as Record<string, unknown>)[key];
    if (typeof x === 'object' && x !== null && !(x instanceof Date)) return undefined;
    size += key.length + 4 + jsonAtLeast(x);
  }
  frozenSizes.set(v, size);
  return size;
}

/** The lower bound jsonExceeds counts, walked until it passes `limit` (Infinity: the whole value). */
export function jsonAtLeast(value: unknown, limit = Infinity): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 2;
    else if (v === null || v === undefined || typeof v === 'boolean') total += 4;
    else if (typeof v === 'number' || typeof v === 'bigint') total += 1;
    else if (Array.isArray(v)) {
      const known = sizes.get(v);
      if (known !== undefined) total += known;
      else {
        total += 2 + v.length;
        for (let i = 0; i < v.length; i++) stack.push(v[i]);
      }
    } else if (typeof v === 'object') {
      if (v instanceof Date) {
        total += 26;
        continue;
      }
      const frozen = frozenScalarsSize(v);
      if (frozen !== undefined) {
        total += frozen;
        continue;
      }
      total += 2;
      for (const key in v) {
        total += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
    if (total > limit) return total;
  }
  return total;
}

export function responseTooLarge(limit: number): AppError {
  return new AppError(
    'validation_error',
    `The answer would be larger than ${limit} bytes (GRAPHQL_MAX_RESPONSE_BYTES): ask for fewer fields, items or aliases.`,
    { limit: 'GRAPHQL_MAX_RESPONSE_BYTES', max: limit },
  );
}
