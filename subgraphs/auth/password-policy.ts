// What a new password must be: 8–1024 characters, and not guessable. Strength is estimated by
// zxcvbn (@zxcvbn-ts, with its common and English dictionaries bundled: no network), which
// knows common passwords, names, words, keyboard walks, dates and l33t spellings; a score of
// PASSWORD_MIN_SCORE (0–4, default 3) or more is required. Existing passwords are not checked
// again: only new ones (users created by anyone, bootstrap, password changes).
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

/**
 * Loaded and built on first use: the dictionaries take ~150 ms and several MiB, which most
 * processes never need (only new passwords are checked).
 */
let factory: ZxcvbnFactory | undefined;
function estimator(): ZxcvbnFactory {
  if (!factory) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { ZxcvbnFactory: Factory } = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core');
    const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    const en = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en');
    /* eslint-enable @typescript-eslint/no-require-imports */
    factory = new Factory({
      dictionary: { ...common.dictionary, ...en.dictionary },
      graphs: common.adjacencyGraphs,
      translations: en.translations,
    });
  }
  return factory;
}

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
