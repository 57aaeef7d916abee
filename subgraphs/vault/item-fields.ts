// The value rules of an item's own fields (tags, category, title), shared by capture, changes
// and rules; lengths as JSON Schema counts them (code points), so the document and the service agree.
import { validationError } from '../../lib/errors';

const TAG = /^[^\s,]{1,50}$/u;

/** Characters as JSON Schema counts them (code points). */
export const chars = (s: string) => [...s].length;

export const TITLE_MAX = 500;

/** A title as given: at most TITLE_MAX characters. */
export function checkTitle(title: string): void {
  if (chars(title) > TITLE_MAX) throw validationError({ title: [`at most ${TITLE_MAX} characters`] });
}

export function normaliseTags(tags: string[], field = 'tags'): string[] {
  const out = new Set<string>();
  for (const raw of tags) {
    const tag = raw.trim().toLowerCase();
    if (!TAG.test(tag))
      throw validationError({ [field]: [`"${raw}" must be 1 to 50 characters without spaces or commas`] });
    out.add(tag);
  }
  if (out.size > 50) throw validationError({ [field]: ['at most 50 tags'] });
  return [...out];
}

export function checkCategory(category: string | null | undefined): string | null | undefined {
  if (category == null) return category;
  const c = category.trim();
  if (!c || chars(c) > 100) throw validationError({ category: ['must be 1 to 100 characters'] });
  return c;
}
