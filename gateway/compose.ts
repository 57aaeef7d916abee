// Composition of subgraph schemas into the supergraph, with failures in plain words.
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { HOP_SECRET_HEADER } from '../lib/request-context';

export interface SubgraphSdl {
  name: string;
  /** Where the gateway reaches it; in one process a placeholder that is never fetched. */
  url: string;
  sdl: string;
}

export class CompositionError extends Error {
  constructor(readonly problems: string[]) {
    super(`The subgraphs do not compose:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function composeSupergraph(subgraphs: SubgraphSdl[]): string {
  const result = composeServices(subgraphs.map((s) => ({ name: s.name, url: s.url, typeDefs: parse(s.sdl) })));
  if (result.errors) {
    throw new CompositionError(
      result.errors.map(
        (e) => `${typeof e.extensions?.code === 'string' ? `[${e.extensions.code}] ` : ''}${e.message}`,
      ),
    );
  }
  return result.supergraphSdl;
}

/** Reads a running subgraph's SDL the way federation defines it (`_service { sdl }`). */
export async function fetchSubgraphSdl(name: string, url: string, hopSecret?: string): Promise<SubgraphSdl> {
  const res = await fetch(url, {
    method: 'POST',
    // `_service` is answered only with the hop secret in production (lib/hop.ts).
    headers: { 'content-type': 'application/json', ...(hopSecret ? { [HOP_SECRET_HEADER]: hopSecret } : {}) },
    body: JSON.stringify({ query: '{ _service { sdl } }' }),
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as { data?: { _service?: { sdl?: string } } };
  const sdl = body.data?._service?.sdl;
  if (!sdl) throw new Error(`subgraph ${name} at ${url} did not answer with its SDL (HTTP ${res.status})`);
  return { name, url, sdl };
}
