// The subgraphs this build contains. Only entry points read this list; the gateway is
// handed what it should compose.
import type { SubgraphDefinition } from '../lib/subgraph';
import { authSubgraph } from './auth';
import { ttsSubgraph } from './tts';
import { hubsSubgraph } from './hubs';
import { integrationsSubgraph } from './integrations';
import { notesSubgraph } from './notes';
import { vaultSubgraph } from './vault';

export const subgraphDefinitions: Record<string, SubgraphDefinition> = {
  auth: authSubgraph,
  tts: ttsSubgraph,
  hubs: hubsSubgraph,
  integrations: integrationsSubgraph,
  notes: notesSubgraph,
  vault: vaultSubgraph,
};

export function selectSubgraphs(names: string[]): SubgraphDefinition[] {
  if (!names.length) return Object.values(subgraphDefinitions);
  return names.map((name) => {
    const def = subgraphDefinitions[name];
    if (!def) throw new Error(`Unknown subgraph "${name}"; known: ${Object.keys(subgraphDefinitions).join(', ')}`);
    return def;
  });
}
