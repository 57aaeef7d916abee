// What a new password must be: 8–1024 characters, and not guessable. Strength is estimated by
// zxcvbn (@zxcvbn-ts, with its common and English dictionaries bundled: no network), which
// knows common passwords, names, words, keyboard walks, dates and l33t spellings; a score of
// PASSWORD_MIN_SCORE (0–4, default 3) or more is required. Existing passwords are not checked
// again: only new ones (users created by anyone, bootstrap, password changes).
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

/** Built on first use: loading the dictionaries takes ~150 ms, which most processes never need. */
let factory: ZxcvbnFactory | undefined;
const estimator = () =>
  (factory ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
  }));

/**
 * The problems of a proposed password, empty when it is acceptable. `context` (the username)
 * counts as known to an attacker: a password built from it scores lower.
 */
export function passwordProblems(password: string, minScore: number, context: string[] = []): string[] {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    return [`must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`];
  }
  const result = estimator().check(password, context.filter(Boolean));
  if (result.score >= minScore) return [];
  const why = [result.feedback.warning, ...result.feedback.suggestions].filter(Boolean).join(' ');
  return [`is too easy to guess (strength ${result.score} of 4, at least ${minScore} needed)${why ? `: ${why}` : ''}`];
}
