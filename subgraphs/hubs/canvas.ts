// JSON Canvas 1.0 (https://jsoncanvas.org/spec/1.0/), the open format of Obsidian's canvases:
// its JSON schema (canvas-schema.ts, checked with ajv), a hub written as a canvas, and a canvas read as a hub's
// nodes and edges. Unknown fields are ignored, as the format allows; `file` nodes become text
// nodes naming the file; ref nodes export as text nodes naming and linking what they point at.
import Ajv from 'ajv';
import { AppError, validationError } from '../../lib/errors';
import type { HubEdge } from './entities/hub-edge';
import type { HubNode } from './entities/hub-node';
import type { GraphRows, NodeInput } from './hub-service';
import { JSON_CANVAS_SCHEMA } from './canvas-schema';
import {
  charCount,
  COLOR_PATTERN,
  HubLimits,
  INT32_MAX,
  INT32_MIN,
  isHttpUrl,
  LABEL_MAX,
  SIZE_MAX,
  SIZE_MIN,
} from './hub-rules';

const ajv = new Ajv({ allErrors: true, strict: false });
const validateCanvas = ajv.compile(JSON_CANVAS_SCHEMA);

/** At most this many problems are listed in `details`. */
const MAX_DETAILS = 20;

interface CanvasNode {
  id: string;
  type: 'text' | 'file' | 'link' | 'group';
  x: number;
  y: number;
  width: number;
  height: number;
  color?: string;
  text?: string;
  file?: string;
  subpath?: string;
  url?: string;
  label?: string;
}
interface CanvasEdge {
  id: string;
  fromNode: string;
  toNode: string;
  fromSide?: string;
  toSide?: string;
  fromEnd?: string;
  toEnd?: string;
  color?: string;
  label?: string;
}
export interface JsonCanvas {
  nodes?: CanvasNode[];
  edges?: CanvasEdge[];
}

const path = (p: string) => `canvas${p.replace(/\//g, '.')}`;

/** A colour of ours, or none: a colour the format allows but this module does not store is dropped. */
const colorOf = (color: string | undefined) => (color && COLOR_PATTERN.test(color) ? color : null);

/**
 * Reads a canvas as a hub's rows: `validation_error` with details (`canvas.nodes.3.x`) when it is
 * not JSON Canvas 1.0, or breaks a rule of hubs (layout bounds, text length, dangling edges).
 */
export function graphFromCanvas(canvas: unknown, limits: HubLimits): GraphRows {
  const problems: Record<string, string[]> = {};
  const add = (at: string, message: string) => {
    if (Object.keys(problems).length < MAX_DETAILS) (problems[at] ??= []).push(message);
  };
  if (!validateCanvas(canvas)) {
    for (const e of validateCanvas.errors ?? []) {
      if (e.keyword === 'if') continue;
      // A missing field is named by its whole path (`canvas.nodes.3.id`), as other problems are.
      if (e.keyword === 'required')
        add(path(`${e.instancePath}/${(e.params as { missingProperty: string }).missingProperty}`), 'is required');
      else add(path(e.instancePath), e.message ?? 'is invalid');
    }
    throw validationError(problems, 'The canvas is not a valid JSON Canvas 1.0 document.');
  }
  const doc = canvas as JsonCanvas;
  const nodes = doc.nodes ?? [];
  const edges = doc.edges ?? [];
  const index = new Map<string, number>();
  const rows: NodeInput[] = nodes.map((n, i) => {
    const at = `canvas.nodes.${i}`;
    if (index.has(n.id)) add(`${at}.id`, 'must be unique among the nodes');
    index.set(n.id, i);
    for (const k of ['x', 'y'] as const)
      if (n[k] < INT32_MIN || n[k] > INT32_MAX) add(`${at}.${k}`, 'must be a 32-bit integer');
    for (const k of ['width', 'height'] as const)
      if (n[k] < SIZE_MIN || n[k] > SIZE_MAX) add(`${at}.${k}`, `must be ${SIZE_MIN} to ${SIZE_MAX}`);
    const layout = { x: n.x, y: n.y, width: n.width, height: n.height, color: colorOf(n.color) };
    let text: string | undefined;
    if (n.type === 'text') text = n.text!;
    else if (n.type === 'file') text = `${n.file}${n.subpath ?? ''}`;
    else if (n.type === 'link' && !isHttpUrl(n.url!)) text = n.url!; // not a web link: kept as its text
    if (text !== undefined) {
      if (charCount(text) > limits.nodeTextMaxChars)
        add(`${at}.text`, `must be at most ${limits.nodeTextMaxChars} characters`);
      return { type: 'text', ...layout, text };
    }
    if (n.type === 'link') return { type: 'link', ...layout, url: n.url! };
    if (n.label !== undefined && charCount(n.label) > LABEL_MAX)
      add(`${at}.label`, `must be at most ${LABEL_MAX} characters`);
    // An empty label is kept as written (""), so that an export gives back what was imported.
    return { type: 'group', ...layout, label: n.label === undefined ? null : n.label.trim() };
  });
  const edgeIds = new Set<string>();
  const edgeRows = edges.map((e, i) => {
    const at = `canvas.edges.${i}`;
    if (edgeIds.has(e.id)) add(`${at}.id`, 'must be unique among the edges');
    edgeIds.add(e.id);
    const fromIndex = index.get(e.fromNode);
    const toIndex = index.get(e.toNode);
    if (fromIndex === undefined) add(`${at}.fromNode`, 'is not a node of the canvas');
    if (toIndex === undefined) add(`${at}.toNode`, 'is not a node of the canvas');
    if (e.label !== undefined && charCount(e.label) > LABEL_MAX)
      add(`${at}.label`, `must be at most ${LABEL_MAX} characters`);
    return {
      fromIndex: fromIndex ?? -1,
      toIndex: toIndex ?? -1,
      fromNode: e.fromNode,
      toNode: e.toNode,
      fromSide: e.fromSide ?? null,
      toSide: e.toSide ?? null,
      fromEnd: e.fromEnd ?? null,
      toEnd: e.toEnd ?? null,
      label: e.label === undefined ? null : e.label.trim(),
      color: colorOf(e.color),
    };
  });
  if (Object.keys(problems).length) throw validationError(problems, 'The canvas breaks a rule of hubs (see details).');
  return { nodes: rows, edges: edgeRows };
}

const REF_LINKS: Record<string, { name: string; path: string }> = {
  note: { name: 'Note', path: '/api/v1/notes/' },
  vault_item: { name: 'Vault item', path: '/api/v1/vault/items/' },
  voice: { name: 'Voice', path: '/api/v1/tts/voices/' },
};

/** What a ref node's text is made from: the node, and the title of what it points at when it could be read. */
interface RefNodeLook {
  type: string;
  refId: string | null;
  label: string | null;
  missing: boolean;
  title?: string | null;
}

/**
 * A ref node as canvas text: its label, else the title of what it points at (read through
 * federation by the caller of the export), else the kind and id; and a link to it.
 */
export function refNodeText(n: RefNodeLook): string {
  const ref = REF_LINKS[n.type];
  if (!ref) throw new AppError('internal_error', `Unknown node type ${n.type}.`);
  const title = n.label || n.title?.trim() || `${ref.name} ${n.refId}`;
  // Markdown's own characters in a title are escaped so that the bold and the link stay whole.
  const escaped = title.replace(/[\\`*_[\]<>]/g, '\\$&').replace(/\s+/g, ' ');
  return `**${escaped}**\n\n[${ref.name}](${ref.path}${n.refId})${n.missing ? '\n\n(deleted)' : ''}`;
}

/** A ref node of a hub as the export reads it through the gateway (GraphQL's names). */
export interface TitledRefNode {
  id: string;
  type: string;
  refId: string | null;
  label: string | null;
  missing: boolean;
  note?: { title?: string | null } | null;
  vaultItem?: { title?: string | null } | null;
  voice?: { name?: string | null } | null;
}

/** The canvas with each ref node's text naming what it points at by its title (the REST export). */
export function withRefTitles(canvas: JsonCanvas, refs: TitledRefNode[]): JsonCanvas {
  const byId = new Map(refs.map((r) => [r.id, r]));
  return {
    ...canvas,
    nodes: canvas.nodes?.map((node) => {
      const ref = byId.get(node.id);
      if (!ref) return node;
      const title = ref.note?.title ?? ref.vaultItem?.title ?? ref.voice?.name ?? null;
      return { ...node, text: refNodeText({ ...ref, title }) };
    }),
  };
}

/** A hub as a JSON Canvas 1.0 document: groups first (they lie beneath), then the rest, each in creation order. */
export function canvasOf(nodes: readonly HubNode[], edges: readonly HubEdge[]): JsonCanvas {
  const ordered = [...nodes.filter((n) => n.type === 'group'), ...nodes.filter((n) => n.type !== 'group')];
  const optional = <T extends object>(o: T) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
  return {
    nodes: ordered.map((n) => {
      const base = optional({ id: n.id, x: n.x, y: n.y, width: n.width, height: n.height, color: n.color });
      if (n.type === 'link') return { ...base, type: 'link', url: n.url! } as CanvasNode;
      if (n.type === 'group') return { ...base, type: 'group', ...optional({ label: n.label }) } as CanvasNode;
      if (n.type === 'text') return { ...base, type: 'text', text: n.text ?? '' } as CanvasNode;
      return { ...base, type: 'text', text: refNodeText(n) } as CanvasNode;
    }),
    edges: edges.map(
      (e) =>
        optional({
          id: e.id,
          fromNode: e.fromNode,
          fromSide: e.fromSide,
          fromEnd: e.fromEnd,
          toNode: e.toNode,
          toSide: e.toSide,
          toEnd: e.toEnd,
          color: e.color,
          label: e.label,
        }) as CanvasEdge,
    ),
  };
}
