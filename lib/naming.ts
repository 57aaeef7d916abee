// The one rule between the two spellings of a field: GraphQL and the code say camelCase
// (`baseVoice`), REST bodies, error details and event payloads say snake_case (`base_voice`).

/** `baseVoice` → `base_voice`; a name in snake_case already stays as it is. */
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `base_voice` → `baseVoice`; a name in camelCase already stays as it is. */
export const camelCase = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The same object with its own keys in snake_case (values untouched). */
export const snakeKeys = <T>(object: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(object).map(([key, value]) => [snakeCase(key), value]));
