// Renders docs/api-examples.md from the exchanges test/facade/api-examples.test.ts makes: a
// section per module (the module list's order, then the event stream), in each a request and its
// answer for every route, in the route table's order.
import path from 'node:path';
import { eventsRoutes } from '../../gateway/events-routes';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { modules, trashRoutes } from '../../subgraphs';

export const API_EXAMPLES_DOC = path.join(__dirname, '../../docs/api-examples.md');

/** Each module page, and the sections of docs/api-examples.md it links to. */
export const MODULE_PAGES: Record<string, string[]> = {
  'README.md': ['auth', 'tts', 'hubs', 'integrations', 'notes', 'vault', 'events'],
  'docs/roles-and-scopes.md': ['auth'],
  'docs/speech-formats.md': ['tts'],
  'docs/hubs.md': ['hubs'],
  'docs/integrations.md': ['integrations', 'createapikey'],
  'docs/notes.md': ['notes'],
  'docs/vault.md': ['vault'],
  'docs/trash.md': ['trash'],
  'docs/imports-and-exports.md': ['transfer'],
};

export interface Example {
  operationId: string;
  method: string;
  /** Below the server's origin, with the query. */
  url: string;
  requestHeaders?: Record<string, string>;
  requestBody?: unknown;
  status: number;
  headers: Record<string, string>;
  /** JSON, a text answer, or a note of what binary came. */
  body: unknown;
}

export interface Section {
  name: string;
  routes: RouteSpec[];
}

/** The sections, by the module list: each module's routes, then the event stream's. */
export function moduleSections(): Section[] {
  return [
    ...modules.flatMap((m) => (m.routes ? [{ name: m.name, routes: m.routes.routes }] : [])),
    { name: 'trash', routes: trashRoutes.routes },
    { name: 'events', routes: eventsRoutes.routes },
  ];
}

export const exampleAnchor = (route: RouteSpec) => route.operationId.toLowerCase();

/** The answer headers worth showing; the rest (Date, rate limits, CORS, …) are the same everywhere. */
const SHOWN_HEADERS = ['content-type', 'location', 'etag', 'cache-control', 'content-disposition', 'accept-ranges'];

/** Secrets shortened to their start (`eyJhbGciOi…`, `fvk_9xQe…`, `whsec_…`): an example is not a credential. */
function shorten(value: unknown): unknown {
  const SECRET_FIELDS = /^(access_token|refresh_token|key|secret|ticket)$/;
  const walk = (v: unknown, name = ''): unknown => {
    if (typeof v === 'string') {
      if (SECRET_FIELDS.test(name) || /^eyJ[\w-]+\.[\w-]+\.[\w-]*$/.test(v)) return `${v.slice(0, 10)}…`;
      return v;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk(value);
}

/** Long lists (the base voices' catalogue) cut to their first few entries: 3 objects, or 16 plain values. */
function cut(value: unknown): unknown {
  if (Array.isArray(value)) {
    const max = value.some((v) => v && typeof v === 'object') ? 3 : 16;
    return value.length > max ? [...value.slice(0, max).map(cut), `… ${value.length - max} more`] : value.map(cut);
  }
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v)]));
  return value;
}

/** JSON indented by two, with a short list of plain values on one line. */
function format(value: unknown, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (!value.length) return '[]';
    const flat = `[${value.map((v) => JSON.stringify(v)).join(', ')}]`;
    if (value.every((v) => v === null || typeof v !== 'object') && flat.length <= 80) return flat;
    return `[\n${value.map((v) => inner + format(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (!entries.length) return '{}';
    const flat = `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ')} }`;
    if (indent && entries.every(([, v]) => v === null || typeof v !== 'object') && flat.length <= 60) return flat;
    return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${format(v, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}

/** A body as shown: secrets cut short, and in answers long lists too (a request is shown whole). */
const json = (value: unknown, answer = false) => format(answer ? cut(shorten(value)) : shorten(value));
const STATUS_TEXT: Record<number, string> = { 200: 'OK', 202: 'Accepted' };

function renderExample(route: RouteSpec, e: Example): string {
  const request = [`${e.method} ${e.url}`];
  if (route.auth) request.push('Authorization: Bearer eyJhbGciOi…');
  for (const [name, value] of Object.entries(e.requestHeaders ?? {})) request.push(`${name}: ${value}`);
  if (e.requestBody !== undefined) request.push('Content-Type: application/json', '', json(e.requestBody));
  const answer = [`${e.status} ${STATUS_TEXT[e.status] ?? ''}`.trim()];
  for (const name of SHOWN_HEADERS) if (e.headers[name]) answer.push(`${name}: ${e.headers[name]}`);
  answer.push('');
  answer.push(typeof e.body === 'string' ? e.body : json(e.body, true));
  return [
    `<a id="${exampleAnchor(route)}"></a>`,
    `### ${route.method.toUpperCase()} /api/v1${route.path}`,
    '',
    `${route.summary} (\`${route.operationId}\`).`,
    '',
    '```http',
    ...request,
    '```',
    '',
    '```http',
    ...answer,
    '```',
    '',
  ].join('\n');
}

export function renderExamples(sections: Section[], examples: Map<string, Example>): string {
  const out = [
    '# REST API examples',
    '',
    '<!-- Generated by test/facade/api-examples.test.ts (`npm run docs:api-examples`) against a running server: do not edit. -->',
    '',
    'A request and its answer for every route of the REST facade (`/api/v1`), made against the one-process',
    'server on SQLite. Ids, versions and times are what that run got; tokens, keys and secrets are cut short',
    '(`eyJhbGciOi…`, `fvk_…`, `whsec_…`). Every field of every body is in the OpenAPI document',
    '(`GET /api/v1/openapi.json`); CONTRACT.md and the module pages say what they mean.',
    '',
    ...sections.map((s) => `- [${s.name}](#${s.name})`),
    '',
  ];
  for (const section of sections) {
    out.push(`## ${section.name}`, '');
    for (const route of section.routes) {
      const example = examples.get(route.operationId);
      if (example) out.push(renderExample(route, example));
    }
  }
  return out.join('\n');
}
