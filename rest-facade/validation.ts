// Request validation from the route table's JSON Schemas, with messages per field.
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { RouteSpec } from './route-spec';
import type { JsonSchema } from './schemas';

// verbose: an error carries its schema, where `x-one-of-error` says how to name a failed oneOf or anyOf.
const bodyAjv = addFormats(new Ajv({ allErrors: true, removeAdditional: 'all', strict: false, verbose: true }));
const paramAjv = addFormats(new Ajv({ allErrors: true, coerceTypes: true, removeAdditional: 'all', strict: false }));

// OpenAPI's `format: byte` (base64), checked without a backtracking regex: ajv-formats' own
// pattern overflows V8's regex stack on a 14 MiB file capture (a 500 instead of an answer).
const BASE64_CHARACTERS = /^[A-Za-z0-9+/]*={0,2}$/;
const isBase64 = (value: string) => value.length % 4 === 0 && BASE64_CHARACTERS.test(value);
bodyAjv.addFormat('byte', { type: 'string', validate: isBase64 });

export type FieldErrors = Record<string, string[]>;

const ALTERNATIVES = ['oneOf', 'anyOf'];

/** A field named by the client (`__proto__`, `constructor`) is a key like any other, never the prototype's. */
function add(into: FieldErrors, field: string, message: string): void {
  if (Object.hasOwn(into, field)) into[field].push(message);
  else Object.defineProperty(into, field, { value: [message], enumerable: true, writable: true, configurable: true });
}

/** Which values would do (Ajv's own message does not say), and the schema's note on them (`x-enum-note`). */
function enumMessage(e: ErrorObject): string {
  const values = (e.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ');
  const note = e.parentSchema?.['x-enum-note'];
  return `must be one of ${values}${typeof note === 'string' ? ` (${note})` : ''}`;
}

function fieldErrors(errors: ErrorObject[] | null | undefined, into: FieldErrors): void {
  const oneOfs = (errors ?? []).filter((e) => ALTERNATIVES.includes(e.keyword));
  for (const e of errors ?? []) {
    // A failure among alternatives is one message, not one per alternative that did not match.
    if (oneOfs.some((o) => o !== e && e.instancePath === o.instancePath && e.schemaPath.startsWith(`${o.schemaPath}/`)))
      continue;
    const oneOfError = ALTERNATIVES.includes(e.keyword)
      ? (e.parentSchema as { 'x-one-of-error'?: { field: string; message: string } })?.['x-one-of-error']
      : undefined;
    if (oneOfError) {
      add(into, oneOfError.field, oneOfError.message);
      continue;
    }
    // A missing field is named by its whole path (`canvas.nodes.3.id`), as other errors are.
    const at = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const field =
      e.keyword === 'required'
        ? [at, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.')
        : at || 'body';
    const message =
      e.keyword === 'required'
        ? 'is required'
        : e.keyword === 'pattern'
          ? (e.params as { pattern: string }).pattern === '\\S'
            ? 'must not be blank'
            : 'has the wrong format'
          : e.keyword === 'minLength' && e.data === '' && (e.parentSchema as JsonSchema)?.['x-trimmed']
            ? 'must not be blank'
            : e.keyword === 'enum'
              ? enumMessage(e)
              : (e.message ?? 'is invalid');
    add(into, field, message);
  }
}

export interface RouteValidator {
  /** Coerces and strips in place; returns the problems per field, or null when valid. */
  (input: { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown }): FieldErrors | null;
}

/**
 * Trims the body's text fields whose lengths count after trimming (`x-trimmed`), before they are
 * checked: the service stores them trimmed, so `"  name  "` is a name of 4 characters.
 */
function trimmer(schema: JsonSchema | undefined): (body: Record<string, unknown>) => void {
  const trimmed = Object.entries((schema?.properties ?? {}) as Record<string, JsonSchema>)
    .filter(([, s]) => s['x-trimmed'])
    .map(([name]) => name);
  return (body) => {
    for (const name of trimmed) if (typeof body[name] === 'string') body[name] = body[name].trim();
  };
}

function compileSchemas(route: RouteSpec) {
  const params: ValidateFunction | undefined = route.params
    ? paramAjv.compile({ type: 'object', properties: route.params, required: Object.keys(route.params) })
    : undefined;
  const query = route.query
    ? paramAjv.compile({ ...route.query.schema, required: route.query.required ?? [] })
    : undefined;
  const body = route.body ? bodyAjv.compile(route.body) : undefined;
  return { params, query, body };
}

/**
 * A route's validator, its schemas compiled by Ajv on its first request: compiling all ~110
 * routes took ~0.4 s of CPU at every start, most of it for routes a process never serves.
 * (test/facade/openapi.test.ts compiles every route's, so a bad schema still fails the suite.)
 */
export function compileValidator(route: RouteSpec): RouteValidator {
  let compiled: ReturnType<typeof compileSchemas> | undefined;
  const trim = trimmer(route.body);
  return (input) => {
    const { params, query, body } = (compiled ??= compileSchemas(route));
    const problems: FieldErrors = {};
    if (params && !params(input.params)) fieldErrors(params.errors, problems);
    if (query && !query(input.query)) fieldErrors(query.errors, problems);
    if (body) {
      if (
        input.body === undefined ||
        input.body === null ||
        typeof input.body !== 'object' ||
        Array.isArray(input.body)
      ) {
        problems.body = ['must be a JSON object'];
      } else {
        trim(input.body as Record<string, unknown>);
        if (!body(input.body)) fieldErrors(body.errors, problems);
      }
    }
    return Object.keys(problems).length ? problems : null;
  };
}
