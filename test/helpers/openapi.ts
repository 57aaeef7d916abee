// Whether an answer is one the OpenAPI document promises: its status is listed for the
// operation, and its JSON body matches that status's schema field for field (objects made strict:
// no undocumented field). For tests that check one module's routes against the served document;
// test/facade/openapi-conformance.test.ts drives every operation.
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { ApiResponse } from './http';

type Schema = Record<string, any>;
export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, any> }>>;
  components: { schemas: Record<string, Schema> };
}

/** The schema made strict: an object lists every field it may have. */
export function strict(schema: any): any {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Schema = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'example' ? v : strict(v)]));
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}

/** What is wrong with the answer by the document ([] when nothing); `template` is the documented path, e.g. `/api/v1/x/{id}`. */
export function undocumented(doc: OpenApiDocument, method: string, template: string, res: ApiResponse): string[] {
  const operation = doc.paths[template]?.[method.toLowerCase()];
  if (!operation) return [`${method} ${template} is not in the document`];
  const answer = operation.responses[String(res.status)];
  if (!answer) return [`${method} ${template} answered ${res.status}, which the document does not list`];
  const schema = answer.content?.['application/json']?.schema;
  if (!schema) return [];
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  ajv.addFormat('double', true);
  ajv.addSchema(strict({ components: doc.components }), 'doc');
  const validate = ajv.compile(
    strict(JSON.parse(JSON.stringify(schema).replace(/"#\/components/g, '"doc#/components'))),
  );
  return validate(res.body)
    ? []
    : (validate.errors ?? []).map((e) => `${res.status} body ${e.instancePath} ${e.message}`);
}
