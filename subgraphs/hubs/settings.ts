// The hubs module's settings: its fragment of the configuration (lib/config.ts merges it; each
// `.describe()` is the setting's row in docs/configuration.md, written by `npm run docs:config`).
import type { z } from 'zod';
import type { SettingKinds } from '../../lib/config';

const capped = '409 `conflict` with `details: { limit, max, count }`';

export const hubsSettings = ({ int }: SettingKinds) => ({
  HUBS_PER_USER: int(1, 100_000_000)
    .default(1000)
    .describe(`hubs one user keeps; past it a create or import is ${capped} ([hubs.md](hubs.md))`),
  HUB_MAX_NODES: int(1, 1_000_000).default(5000).describe(`nodes in one hub; past it ${capped}`),
  HUB_MAX_EDGES: int(1, 10_000_000).default(20_000).describe(`edges in one hub; past it ${capped}`),
  HUB_MAX_TEXT_BYTES: int(1024, 1024 ** 3)
    .default(5 * 1024 * 1024)
    .describe(`UTF-8 bytes of all the node texts of one hub (5 MiB); past it ${capped}`),
  HUB_NODE_TEXT_MAX_CHARS: int(1, 1_000_000)
    .default(20_000)
    .describe('characters of one text node (CONTRACT.md: ≤ 20,000); longer is 400 `validation_error`'),
  HUB_GRAPH_CACHE_BYTES: int(0, 16 * 1024 ** 3)
    .default(64 * 1024 ** 2)
    .describe(
      'bytes (an estimate) of whole hub graphs each process keeps in memory, by graph version, least recently used out first (64 MiB; a 5,000-node hub takes about 8 MiB); `0` keeps none',
    ),
  HUB_GRAPH_SELECTIONS: int(0, 1000)
    .default(8)
    .describe(
      "answers of typed GraphQL selections of a kept hub graph's nodes or edges (`hub { nodes { id x y } }`: one per list and set of fields) kept with it, least recently used out first, in `HUB_GRAPH_CACHE_BYTES` (every field of 5,000 nodes and 20,000 edges: about 9 MiB); `0` keeps none",
    ),
  HUB_NEIGHBORS_MAX_NODES: int(1, 100_000)
    .default(500)
    .describe('nodes one neighbours answer holds at most (then `truncated: true`)'),
  HUB_NEIGHBORS_MAX_EDGES: int(1, 10_000_000)
    .default(1000)
    .describe(
      'edges one neighbours search reads at most over all its levels, depth × fan-out (then `truncated: true`)',
    ),
  HUB_IMPORT_BODY_LIMIT_BYTES: int(1024, 64 * 1024 * 1024)
    .default(8 * 1024 * 1024)
    .describe('the body limit of `POST /hubs/import` (8 MiB), instead of `BODY_LIMIT_BYTES`'),
});

declare module '../../lib/config' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the module's settings join Config
  interface ModuleSettings extends z.output<z.ZodObject<ReturnType<typeof hubsSettings>>> {}
}
