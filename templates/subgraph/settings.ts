// The examples module's settings: its fragment of the configuration (lib/config.ts merges it, the
// module list installs it; each `.describe()` is the setting's row in docs/configuration.md,
// written by `npm run docs:config`).
import type { z } from 'zod';
import type { SettingKinds } from '../../lib/config';

/** The per-user cap's setting: also its counter's name and a refusal's `details.limit`. */
export const PER_USER = 'EXAMPLE_ITEMS_PER_USER';

export const examplesSettings = ({ int }: SettingKinds) => ({
  [PER_USER]: int(1, 100_000_000)
    .default(10_000)
    .describe('example items one user keeps; past it a create is 409 `conflict` with `details: { limit, max, count }`'),
});

declare module '../../lib/config' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the module's settings join Config
  interface ModuleSettings extends z.output<z.ZodObject<ReturnType<typeof examplesSettings>>> {}
}
