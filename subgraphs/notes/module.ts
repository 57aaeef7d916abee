// The notes module (notes and folders): what it contributes, in one place (lib/module.ts). Listed
// in subgraphs/index.ts; its subgraph (index.ts) is loaded only where it runs or is composed.
import type { ModuleDefinition } from '../../lib/module';
import { notesEvents } from './events';
import { notesRoutes } from './routes';
import { notesSettings } from './settings';

export const notesModule: ModuleDefinition = {
  name: 'notes',
  subgraph: async () => (await import('./index')).notesSubgraph,
  routes: {
    routes: notesRoutes,
    tags: [
      { name: 'Note', description: 'Markdown notes with tags, links between them, backlinks and archiving.' },
      { name: 'Note folder', description: 'Folders that notes are filed in.' },
    ],
  },
  scopes: ['notes:read', 'notes:write'],
  settings: notesSettings,
  events: notesEvents,
  trash: { type: 'note', list: 'trashedNotes', empty: 'emptyNoteTrash', plural: 'notes' },
};
