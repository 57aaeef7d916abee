// Request validation from the route table's JSON Schemas, with messages per field.
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { RouteSpec } from './route-spec';

// verbose: an error carries its schema, where `x-one-of-error` says how to name an exactly-one failure.
const bodyAjv = addFormats(new Ajv({ allErrors: true, removeAdditional: 'all', strict: false, verbose: true }));
const paramAjv = addFormats(new Ajv({ allErrors: true, coerceTypes: true, removeAdditional: 'all', strict: false }));

export type FieldErrors = Record<string, string[]>;

function fieldErrors(errors: ErrorObject[] | null | undefined, into: FieldErrors): void {
  const oneOfs = (errors ?? []).filter((e) => e.keyword === 'oneOf');
  for (const e of errors ?? []) {
    // An exactly-one failure is one message, not one per alternative that did not match.
    if (oneOfs.some((o) => o !== e && e.instancePath === o.instancePath && e.schemaPath.startsWith(`${o.schemaPath}/`))) continue;
    const oneOfError = e.keyword === 'oneOf' ? (e.parentSchema as { 'x-one-of-error'?: { field: string; message: string } })?.['x-one-of-error'] : undefined;
    if (oneOfError) {
      (into[oneOfError.field] ??= []).push(oneOfError.message);
      continue;
    }
    const field =
      e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty : e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'body';
    const message =
      e.keyword === 'required' ? 'is required'
      : e.keyword === 'pattern' ? ((e.params as { pattern: string }).pattern === '\\S' ? 'must not be blank' : 'has the wrong format')
      : e.message ?? 'is invalid';
    (into[field] ??= []).push(message);
  }
}

export interface RouteValidator {
  /** Coerces and strips in place; returns the problems per field, or null when valid. */
  (input: { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown }): FieldErrors | null;
}

export function compileValidator(route: RouteSpec): RouteValidator {
  const params: ValidateFunction | undefined = route.params
    ? paramAjv.compile({ type: 'object', properties: route.params, required: Object.keys(route.params) })
    : undefined;
  const query = route.query ? paramAjv.compile({ ...route.query.schema, required: route.query.required ?? [] }) : undefined;
  const body = route.body ? bodyAjv.compile(route.body) : undefined;
  return (input) => {
    const problems: FieldErrors = {};
    if (params && !params(input.params)) fieldErrors(params.errors, problems);
    if (query && !query(input.query)) fieldErrors(query.errors, problems);
    if (body) {
      if (input.body === undefined || input.body === null || typeof input.body !== 'object' || Array.isArray(input.body)) {
        problems.body = ['must be a JSON object'];
      } else if (!body(input.body)) fieldErrors(body.errors, problems);
    }
    return Object.keys(problems).length ? problems : null;
  };
}
