// The tts module (voices and speech synthesis): what it contributes, in one place (lib/module.ts). Listed
// in subgraphs/index.ts; its subgraph (index.ts) is loaded only where it runs or is composed.
import type { ModuleDefinition } from '../../lib/module';
import { ttsEvents } from './events';
import { ttsSettings } from './settings';
import { synthesisRenderSeconds } from './metrics';
import { ttsRoutes, ttsSchemas } from './routes';
import { openAiSpeechRoute } from './openai/speech-route';

export const ttsModule: ModuleDefinition = {
  name: 'tts',
  subgraph: async () => (await import('./index')).ttsSubgraph,
  routes: {
    routes: ttsRoutes,
    schemas: ttsSchemas,
    tags: [{ name: 'TTS', description: 'Voices, speech syntheses, their audio and word timings.' }],
    mounted: [openAiSpeechRoute],
  },
  metrics: [synthesisRenderSeconds],
  scopes: ['tts:read', 'tts:write', 'tts:synthesize'],
  publicFields: ['Query.baseVoices', 'BaseVoice'],
  settings: ttsSettings,
  events: ttsEvents,
};
