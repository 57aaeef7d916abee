// OpenAI's `POST /v1/audio/speech`, as the tts module hands it to the REST facade: an endpoint
// beside /api/v1 with a handler of its own (rest-facade/route-spec.ts MountedRoute).
import type { MountedRoute } from '../../../rest-facade/route-spec';
import { speechOperation } from './speech-openapi';
import { SPEECH_OPERATIONS } from './speech-operations';
import { speechRouter } from './speech-router';

export const openAiSpeechRoute: MountedRoute = {
  method: 'post',
  path: '/v1/audio/speech',
  openapi: speechOperation,
  tag: {
    name: 'OpenAI compatibility',
    description: "OpenAI's speech API (`POST /v1/audio/speech`), for clients written for it.",
  },
  operations: Object.values(SPEECH_OPERATIONS),
  router: speechRouter,
};
