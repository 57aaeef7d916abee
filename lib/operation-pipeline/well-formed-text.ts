// The pipeline's text step: every string a caller sends in an operation's variables must be
// well-formed UTF-16 (no lone surrogate, such as a JSON "\ud800"). SQLite and MariaDB store text
// as UTF-8, where a lone surrogate has no encoding: it was silently rewritten on the way in, so
// a uniqueness check made in JavaScript missed what the index then refused (a folder named
// "\ud800" created twice, two vault tags differing only in lone surrogates: 500s, issue 41
// finding 9). Refusing them here, once, covers every module, REST (whose bodies become
// variables) and GraphQL alike. Strings in the document itself need no check: graphql-js refuses
// a lone surrogate in a literal, escaped or not, as a syntax error.
import { AppError } from '../errors';
import type { OperationStep } from './pipeline';

/** Paths reported at most (the first are enough to find the rest). */
const MAX_REPORTED = 10;

// String.prototype.isWellFormed (Node 20; the project's TypeScript lib is older): native, linear.
const wellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The paths of strings in `value` with a lone surrogate, as a REST body names them (`when.url_matches`, `tags[1]`). */
export function malformedTextPaths(value: unknown, path = '', found: string[] = []): string[] {
  if (found.length >= MAX_REPORTED) return found;
  if (typeof value === 'string') {
    if (!wellFormed(value)) found.push(path || 'body');
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length && found.length < MAX_REPORTED; i++)
      malformedTextPaths(value[i], `${path}[${i}]`, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (!wellFormed(key)) found.push(path ? `${path}.?` : '?');
      malformedTextPaths(inner, path ? `${path}.${snake(key)}` : snake(key), found);
    }
  }
  return found;
}

export function wellFormedTextStep<Caller, Context>(): OperationStep<Caller, Context> {
  return {
    name: 'well-formed-text',
    before(op) {
      const variables = op.request.variables;
      if (!variables) return;
      const paths = malformedTextPaths(variables).map((p) => p.replace(/^input\./, ''));
      if (!paths.length) return;
      op.result = {
        errors: [
          new AppError(
            'validation_error',
            'Text must be well-formed Unicode: a lone surrogate (such as \\ud800) cannot be stored.',
            Object.fromEntries(paths.map((p) => [p, ['contains a lone surrogate']])),
          ),
        ],
      };
    },
  };
}
