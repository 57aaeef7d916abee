// The TTS module's REST routes, under /api/v1/tts: voices, syntheses and their audio. Declarations
// only, each running one GraphQL operation of this module through the gateway
// (rest-facade/graphql-mapping.ts). Handed to the facade by module.ts; `ttsSchemas` are
// the ones the OpenAPI document names.
import { configured } from '../../rest-facade/configured';
import { bodyArgs, queryArg, selection } from '../../rest-facade/graphql-mapping';
import {
  EXPECTED_VERSION,
  EXPECTED_VERSION_ARG,
  idFrom,
  MAX_PAGE_SIZE,
  PAGE_ARGS,
  PAGE_QUERY,
  pageQuery,
  VERSION_QUERY,
} from '../../rest-facade/route-parts';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { CommandAck, JsonSchema, pageSchema, patchBody, trimmedText, uuidParam } from '../../rest-facade/schemas';
import { AUDIO_CONTENT_TYPES, AudioFormat, ENCODED_FORMATS } from './audio/encoders';

/** The audio download's formats (audio/encoders.ts), WAV first: what no `?format=` or `Accept` gets. */
const DOWNLOAD_FORMATS: readonly AudioFormat[] = ['wav', 'pcm', ...ENCODED_FORMATS];

/** A field's schema with a sentence added to its description (e.g. what leaving it out means). */
const noting = (schema: JsonSchema, note: string): JsonSchema => ({
  ...schema,
  description: `${schema.description as string}. ${note}`,
});

export const SynthesisAck: JsonSchema = {
  type: 'object',
  required: ['id', 'message'],
  properties: {
    ...(CommandAck.properties as Record<string, JsonSchema>),
    warning: {
      type: 'string',
      description: 'Present when no synthesis worker is alive: the job is kept queued until one starts.',
    },
  },
};

export const SynthesisStatus: JsonSchema = {
  type: 'object',
  required: ['status', 'live_workers', 'queued', 'oldest_queued_age_seconds'],
  properties: {
    status: { type: 'string', enum: ['up', 'degraded'], description: '`degraded`: no live worker; jobs wait queued' },
    live_workers: { type: 'integer', description: 'Synthesis workers whose heartbeat is recent' },
    queued: { type: 'integer', description: "Jobs waiting (every user's)" },
    oldest_queued_age_seconds: {
      type: 'number',
      nullable: true,
      description: 'How long the oldest queued job has waited; null with none',
    },
  },
};

/**
 * `x-catalog`: the value must be one listed by that endpoint (the catalog belongs to the speech
 * engine, behind the gateway; the facade does not know it, so it links to it instead of an enum).
 */
const BASE_VOICE_CATALOG = { href: '/api/v1/tts/base-voices', values: 'items[].name', case_insensitive: true };
const LANGUAGE_CATALOG = { href: '/api/v1/tts/base-voices', values: 'items[].languages[]', case_insensitive: true };
/** name or name(weight), weight in (0, 100], "+"-joined, at most 8 parts. */
const BLEND_PART = '[A-Za-z0-9_-]+(\\(([1-9][0-9]?(\\.[0-9]+)?|100(\\.0+)?|0\\.[0-9]*[1-9][0-9]*)\\))?';
const BLEND_PATTERN = `^${BLEND_PART}(\\+${BLEND_PART}){0,7}$`;

/** How a voice speaks: the fields of a voice and of a synthesis with inline settings. */
const VOICE_SETTINGS: Record<string, JsonSchema> = {
  base_voice: {
    type: 'string',
    minLength: 1,
    maxLength: 64,
    example: 'f3',
    'x-catalog': BASE_VOICE_CATALOG,
    description:
      'A name from GET /api/v1/tts/base-voices (`items[].name`; case-insensitive; stored as the catalog spells it)',
  },
  voice_blend: {
    type: 'string',
    minLength: 1,
    maxLength: 500,
    example: 'f3(2)+m3(1)',
    pattern: BLEND_PATTERN,
    'x-catalog': BASE_VOICE_CATALOG,
    description:
      'Base voice names (from GET /api/v1/tts/base-voices, case-insensitive) joined by "+", each optionally weighted as ' +
      'name(weight), weight above 0 and at most 100; at most 8 parts',
  },
  language: {
    type: 'string',
    minLength: 1,
    maxLength: 35,
    example: 'en-us',
    'x-catalog': LANGUAGE_CATALOG,
    description:
      'A language tag of the engine (`items[].languages[]` of GET /api/v1/tts/base-voices; case-insensitive)',
  },
  speed: {
    type: 'number',
    format: 'double',
    minimum: 0.25,
    maximum: 4,
    description: 'Speaking speed; 1.0 is normal, 0.5 lasts twice as long, 2.0 half; the pitch stays',
  },
};

/**
 * The settings of something new (a voice, a synthesis): what leaving one out means is said in
 * words, not as a `default`, which generated clients read as "always sent".
 */
const NEW_VOICE_SETTINGS: Record<string, JsonSchema> = {
  ...VOICE_SETTINGS,
  language: noting(VOICE_SETTINGS.language, 'Left out: en-us'),
  speed: noting(VOICE_SETTINGS.speed, 'Left out: 1.0'),
};

const VOICE_NAME = trimmedText(
  1,
  100,
  '1–100 characters after trimming surrounding white space; unique among your voices, ignoring case',
);

export const CreateVoiceRequest: JsonSchema = {
  type: 'object',
  required: ['name', 'base_voice'],
  additionalProperties: true, // unknown fields are ignored
  properties: {
    name: VOICE_NAME,
    description: { type: 'string', maxLength: 1000 },
    ...NEW_VOICE_SETTINGS,
  },
};

const VOICE_CHANGES: Record<string, JsonSchema> = {
  name: VOICE_NAME,
  description: { type: 'string', maxLength: 1000, nullable: true },
  ...VOICE_SETTINGS,
  voice_blend: { ...VOICE_SETTINGS.voice_blend, nullable: true },
};

/** A PATCH body: no `default` anywhere, since a field left out stays as it is. */
export const UpdateVoiceRequest = patchBody(VOICE_CHANGES, {
  description:
    'Any of the fields, each with the rules of voice creation; a field left out stays as it is. `description` and ' +
    '`voice_blend` may be null to clear them.',
});

export const Voice: JsonSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'description',
    'base_voice',
    'voice_blend',
    'language',
    'speed',
    'version',
    'owner_id',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    description: { type: 'string', nullable: true },
    base_voice: { type: 'string' },
    voice_blend: {
      type: 'string',
      nullable: true,
      description: 'As given, with names in the catalog spelling and weights of 1 left out',
    },
    language: { type: 'string' },
    speed: { type: 'number', format: 'double' },
    version: { type: 'integer', minimum: 1, description: '1 when created; every change adds 1. DELETE must name it.' },
    owner_id: { type: 'string', format: 'uuid' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export const VoicePage = pageSchema(Voice);

export const SynthesisRequest: JsonSchema = {
  type: 'object',
  required: ['text'],
  additionalProperties: true, // unknown fields are ignored
  description:
    'Give `voice_id`, or `base_voice` with any of `voice_blend`, `language`, `speed`; exactly one of the two.',
  oneOf: [
    {
      title: 'A voice of yours',
      required: ['voice_id'],
      not: { anyOf: ['base_voice', 'voice_blend', 'language', 'speed'].map((f) => ({ required: [f] })) },
    },
    { title: 'Inline settings', required: ['base_voice'], not: { required: ['voice_id'] } },
  ],
  'x-one-of-error': {
    field: 'voice_id',
    message: 'give voice_id, or base_voice with any of voice_blend, language, speed; exactly one of the two',
  },
  properties: {
    text: {
      type: 'string',
      minLength: 1,
      maxLength: 10000,
      pattern: '\\S',
      description: 'What to say: 1 to 10,000 characters (code points), not only white space',
    },
    voice_id: {
      type: 'string',
      format: 'uuid',
      description: 'One of your voices; its settings are copied into the synthesis now',
    },
    ...NEW_VOICE_SETTINGS,
  },
};

/** Every state a synthesis can be in, as REST spells them. */
export const SYNTHESIS_STATES = ['queued', 'running', 'succeeded', 'failed', 'canceled'];

export const Synthesis: JsonSchema = {
  type: 'object',
  required: [
    'id',
    'state',
    'voice_id',
    'base_voice',
    'voice_blend',
    'language',
    'speed',
    'characters',
    'duration_ms',
    'created_at',
    'started_at',
    'finished_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    state: { type: 'string', enum: SYNTHESIS_STATES },
    voice_id: {
      type: 'string',
      format: 'uuid',
      nullable: true,
      description: 'Null when requested with inline settings',
    },
    base_voice: { type: 'string' },
    voice_blend: { type: 'string', nullable: true },
    language: { type: 'string' },
    speed: { type: 'number', format: 'double' },
    characters: { type: 'integer', description: 'Length of the text in Unicode code points' },
    duration_ms: { type: 'integer', nullable: true, description: 'Length of the audio, once succeeded' },
    error: { type: 'string', description: 'Only when failed: why' },
    created_at: { type: 'string', format: 'date-time' },
    started_at: { type: 'string', format: 'date-time', nullable: true },
    finished_at: { type: 'string', format: 'date-time', nullable: true },
  },
};

export const SynthesisPage = pageSchema(Synthesis);

export const BaseVoice: JsonSchema = {
  type: 'object',
  required: ['name', 'display_name', 'gender', 'languages', 'description'],
  properties: {
    name: { type: 'string', example: 'f3' },
    display_name: { type: 'string', example: 'female3' },
    gender: { type: 'string', nullable: true, enum: ['female', 'male', null] },
    languages: { type: 'array', items: { type: 'string' } },
    description: { type: 'string' },
  },
};

export const BaseVoiceList: JsonSchema = {
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: BaseVoice } },
};

/** A synthesis's word timings (GET /api/v1/tts/syntheses/{id}/timings). */
export const WordTimings: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['word', 'start_ms', 'end_ms', 'char_start', 'char_end'],
    properties: {
      word: { type: 'string', description: 'The text from char_start to char_end' },
      start_ms: { type: 'integer', description: 'When the word starts in the audio' },
      end_ms: { type: 'integer', description: "The next word's start, or the end of the audio" },
      char_start: { type: 'integer', description: 'Where the word starts in the text: code points, 0-based' },
      char_end: { type: 'integer', description: 'Where it ends: code points, exclusive' },
    },
  },
};

/** The schemas the OpenAPI document names (components/schemas), referred to wherever they are used. */
export const ttsSchemas: Record<string, JsonSchema> = {
  CreateVoiceRequest,
  UpdateVoiceRequest,
  Voice,
  VoicePage,
  SynthesisRequest,
  Synthesis,
  SynthesisPage,
  BaseVoice,
  BaseVoiceList,
  SynthesisAck,
  SynthesisStatus,
};

/** REST spells states in lower case; `error` is there only when it failed. */
const presentSynthesis = ({ id, state, error, ...synthesis }: Record<string, any>) => ({
  id,
  state: state.toLowerCase(),
  ...synthesis,
  ...(error == null ? {} : { error }),
});

export const ttsRoutes: RouteSpec[] = [
  {
    operationId: 'listBaseVoices',
    method: 'get',
    path: '/tts/base-voices',
    tag: 'TTS',
    // The public catalogue (public: the tts module definition, module.ts).
    auth: false,
    summary: 'The base voices of the speech engine',
    description: 'eSpeak NG voice variants; each speaks every language the engine has.',
    graphql: { kind: 'query', field: 'baseVoices', select: BaseVoice },
    status: 200,
    present: (items) => ({ items }),
    response: BaseVoiceList,
    errors: [],
  },
  {
    operationId: 'createVoice',
    method: 'post',
    path: '/tts/voices',
    tag: 'TTS',
    auth: true,
    summary: 'Create a voice',
    description:
      "base_voice, voice_blend and language are checked against the engine's catalog. A name you already use " +
      '(ignoring case) is a `conflict`. The new voice has version 1.',
    body: CreateVoiceRequest,
    graphql: { kind: 'mutation', field: 'createVoice', args: bodyArgs(CreateVoiceRequest), select: '{ id }' },
    status: 202,
    ack: 'Voice created.',
    location: (r) => `/api/v1/tts/voices/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'conflict'],
  },
  {
    operationId: 'listVoices',
    method: 'get',
    path: '/tts/voices',
    tag: 'TTS',
    auth: true,
    summary: 'Your voices, oldest first, a page at a time',
    description: 'The voices you made, with their settings and versions (the base voices are GET /tts/base-voices).',
    query: PAGE_QUERY,
    graphql: { kind: 'query', field: 'voices', args: PAGE_ARGS },
    status: 200,
    response: VoicePage,
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'getVoice',
    method: 'get',
    path: '/tts/voices/:voiceId',
    tag: 'TTS',
    auth: true,
    summary: 'One of your voices',
    description: "Another user's voice is `not_found`, like an unknown id.",
    params: { voiceId: uuidParam },
    graphql: { kind: 'query', field: 'voice', args: idFrom('voiceId') },
    status: 200,
    etag: (r) => `"${r.version}"`,
    response: Voice,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'updateVoice',
    method: 'patch',
    path: '/tts/voices/:voiceId',
    tag: 'TTS',
    auth: true,
    summary: 'Change a voice at the version you expect',
    description:
      'Any of name, description, base_voice, voice_blend, language, speed, each with the rules of creation; a field left out ' +
      'stays as it is, and `description` or `voice_blend` set to null is cleared. Name the version you expect with `?version=N` or ' +
      '`If-Match: "N"` (the ETag of GET); it must equal the stored version, else `conflict` with `details.current_version`. Of concurrent ' +
      'updates at one version exactly one is accepted. The version goes up by 1 and a `voice.updated` event carries the changed fields ' +
      '(`changed`, with their former values in `previous`). Syntheses already requested keep the settings they were requested with.',
    params: { voiceId: uuidParam },
    ...EXPECTED_VERSION,
    body: UpdateVoiceRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateVoice',
      select: '{ id version }',
      args: {
        ...idFrom('voiceId'),
        version: EXPECTED_VERSION_ARG,
        ...bodyArgs(UpdateVoiceRequest),
      },
    },
    status: 202,
    ack: 'Voice updated.',
    location: (r) => `/api/v1/tts/voices/${r.id}`,
    etag: (r) => `"${r.version}"`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
  {
    operationId: 'deleteVoice',
    method: 'delete',
    path: '/tts/voices/:voiceId',
    tag: 'TTS',
    auth: true,
    summary: 'Delete a voice at the version you expect',
    description:
      'Optimistic locking: `version` must equal the stored version, else `conflict` with `details.current_version`. ' +
      'Of concurrent deletes with the right version exactly one is accepted; the others get `not_found` or `conflict`.',
    params: { voiceId: uuidParam },
    query: VERSION_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteVoice',
      args: { ...idFrom('voiceId'), version: queryArg('version', 'Int!') },
      select: '{ id }',
    },
    status: 202,
    ack: 'Voice deleted.',
    location: (r) => `/api/v1/tts/voices/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },

  {
    operationId: 'createSynthesis',
    method: 'post',
    path: '/tts/syntheses',
    tag: 'TTS',
    auth: true,
    summary: 'Speak a text with one of your voices (asynchronous)',
    description:
      'Queues the text; poll the Location, or wait for `synthesis.succeeded` / `synthesis.failed` on the event stream. ' +
      "Give `voice_id`, or inline settings (`base_voice` and optionally `voice_blend`, `language`, `speed`). The voice's settings are " +
      "copied in now: deleting the voice later does not change the result. Another user's voice is `not_found`. `speed` (0.25–4.0) is " +
      'the real speed of the audio: eSpeak NG speaks 80 to 450 words per minute (175 at speed 1.0), and speeds beyond that are rendered ' +
      'at the nearest rate and time-stretched (WSOLA) with the pitch kept. A job whose audio would ' +
      `last more than ${configured('SYNTHESIS_MAX_AUDIO_SECONDS', 'duration')} (SYNTHESIS_MAX_AUDIO_SECONDS) fails with that reason. With no synthesis worker alive the job is still ` +
      `accepted and kept queued; the answer then carries a \`warning\`. At most ${configured('SYNTHESIS_QUEUE_PER_USER')} of your syntheses ` +
      '(SYNTHESIS_QUEUE_PER_USER) may be queued or running at once: beyond, 429 `rate_limit_exceeded` with `Retry-After` and ' +
      '`details.limit`; request more as they finish, or cancel some. Workers take jobs round-robin across users, so another ' +
      "user's backlog delays yours by at most one job per worker.",
    body: SynthesisRequest,
    graphql: { kind: 'mutation', field: 'synthesize', args: bodyArgs(SynthesisRequest), select: '{ id warning }' },
    status: 202,
    // `warning` only when no worker is alive to take it (readiness shows synthesis: degraded).
    present: (r) => ({ id: r.id, message: 'Synthesis queued.', ...(r.warning ? { warning: r.warning } : {}) }),
    location: (r) => `/api/v1/tts/syntheses/${r.id}`,
    response: SynthesisAck,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict', 'rate_limit_exceeded'],
  },
  {
    operationId: 'cancelSynthesis',
    method: 'delete',
    path: '/tts/syntheses/:synthesisId',
    tag: 'TTS',
    auth: true,
    summary: 'Cancel a synthesis, or delete a finished one with its audio',
    description:
      'A queued or running synthesis is canceled: its worker stops rendering, it becomes `canceled` (no audio) and ' +
      '`synthesis.canceled` is published; it no longer counts against your queue. A finished one (succeeded, failed, canceled) is ' +
      "deleted with its audio (`synthesis.deleted`); afterwards it is `not_found`. Another user's synthesis is `not_found`.",
    params: { synthesisId: uuidParam },
    graphql: { kind: 'mutation', field: 'cancelSynthesis', args: idFrom('synthesisId'), select: '{ id outcome }' },
    status: 202,
    present: ({ id, outcome }) => ({
      id,
      message: outcome === 'CANCELED' ? 'Synthesis canceled.' : 'Synthesis deleted.',
    }),
    location: (r) => `/api/v1/tts/syntheses/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'listSyntheses',
    method: 'get',
    path: '/tts/syntheses',
    tag: 'TTS',
    auth: true,
    summary: 'Your syntheses, newest first, a page at a time',
    description:
      `Paged like the voices (\`limit\` 1–${MAX_PAGE_SIZE}, default 20; \`cursor\` from \`next_cursor\`), newest first; \`state\` keeps only ` +
      'syntheses in that state. Finished ones are listed until they expire (SYNTHESIS_RETENTION_SECONDS).',
    query: pageQuery({
      state: { type: 'string', enum: SYNTHESIS_STATES, description: 'Only syntheses in this state' },
    }),
    graphql: {
      kind: 'query',
      field: 'syntheses',
      args: {
        ...PAGE_ARGS,
        state: {
          type: 'SynthesisState',
          value: ({ query }) => (typeof query.state === 'string' ? query.state.toUpperCase() : undefined),
        },
      },
    },
    status: 200,
    present: ({ items, next_cursor }) => ({ items: items.map(presentSynthesis), next_cursor }),
    response: SynthesisPage,
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'getSynthesisStatus',
    method: 'get',
    path: '/tts/status',
    tag: 'TTS',
    auth: true,
    summary: 'Whether speech is being rendered: live synthesis workers and the age of the oldest queued job',
    description:
      '`status` is `degraded` while no synthesis worker is alive (jobs are accepted and wait queued). The same figures are ' +
      'in `/health/ready` under `details.synthesis`.',
    graphql: { kind: 'query', field: 'synthesisStatus' },
    status: 200,
    response: SynthesisStatus,
    errors: ['unauthorized'],
  },
  {
    operationId: 'getSynthesis',
    method: 'get',
    path: '/tts/syntheses/:synthesisId',
    tag: 'TTS',
    auth: true,
    summary: 'One of your syntheses: its state, and the length of its audio once done',
    description:
      'state is queued, running, succeeded, failed or canceled; `error` is there only when it failed. Syntheses are deleted with their ' +
      `audio ${configured('SYNTHESIS_RETENTION_SECONDS', 'duration')} (SYNTHESIS_RETENTION_SECONDS) after they finished.`,
    params: { synthesisId: uuidParam },
    graphql: { kind: 'query', field: 'synthesis', args: idFrom('synthesisId') },
    status: 200,
    present: presentSynthesis,
    response: Synthesis,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'getSynthesisAudio',
    method: 'get',
    path: '/tts/syntheses/:synthesisId/audio',
    tag: 'TTS',
    auth: true,
    summary: 'The audio of a succeeded synthesis: WAV, PCM, MP3, Ogg Opus or FLAC (with Range support)',
    description:
      'The format is `?format=` (it wins) or the `Accept` header: audio/wav, audio/pcm, audio/mpeg (mp3), audio/ogg (opus) or ' +
      'audio/flac; no Accept, or `*/*`, gives WAV; an Accept that names none of them is 406 `not_acceptable`. WAV is mono 16-bit ' +
      'PCM at 22,050 Hz (24,000 Hz for a synthesis made by POST /v1/audio/speech) with its true sizes; pcm is its samples without ' +
      "the header. MP3, Opus and FLAC are encoded from the WAV by the first request for the format, in the server's encoder threads " +
      `(AUDIO_ENCODER_THREADS, ${configured('AUDIO_ENCODER_THREADS')}), and sent while they are encoded (no Range, no Content-Length on that one); ` +
      'the encoding is kept beside the WAV (counted in your kept-audio quota, AUDIO_BYTES_PER_USER, and deleted with the synthesis), ' +
      'so later requests are served from it. One byte range (`Range: bytes=…`) answers 206 with Content-Range; a range past ' +
      'the end answers 416; several ranges, or a malformed Range, get the whole file. ETag and If-None-Match / If-Range work. ' +
      'While the synthesis is queued or running, or when it failed, the answer is 409 `conflict` with `details.state`.',
    params: { synthesisId: uuidParam },
    query: {
      schema: {
        type: 'object',
        properties: {
          format: {
            type: 'string',
            enum: [...DOWNLOAD_FORMATS],
            'x-enum-note': 'aac is not served: no well-kept AAC encoder exists as JavaScript or WebAssembly',
            description: 'Wins over Accept',
          },
        },
      },
    },
    graphql: {
      kind: 'query',
      field: 'synthesisAudio',
      args: {
        ...idFrom('synthesisId'),
        format: {
          type: 'SpeechFormat!',
          value: ({ query }) => (typeof query.format === 'string' ? query.format : 'wav').toUpperCase(),
        },
      },
      select: '{ bytes etag }',
    },
    download: {
      chunk: `query SynthesisAudioChunk($id: ID!, $format: SpeechFormat!, $offset: Int!, $length: Int!) { result: synthesisAudio(id: $id, format: $format) { chunk(offset: $offset, length: $length) } }`,
      contentType: 'audio/wav',
      formats: Object.fromEntries(DOWNLOAD_FORMATS.map((f) => [f, AUDIO_CONTENT_TYPES[f]])),
      stream: {
        query: `query SynthesisAudioStream($id: ID!, $format: SpeechFormat!, $offset: Int!, $length: Int!) { result: synthesisStream(id: $id, format: $format, offset: $offset, length: $length) { chunk end } }`,
        pollMs: (config) => config.SPEECH_POLL_MS,
        maxWaitMs: (config) => config.SPEECH_MAX_WAIT_SECONDS * 1000,
      },
    },
    status: 200,
    response: { type: 'string', format: 'binary' },
    errors: [
      'validation_error',
      'unauthorized',
      'not_found',
      'not_acceptable',
      'conflict',
      'range_not_satisfiable',
      'service_unavailable',
    ],
  },
  {
    operationId: 'getSynthesisTimings',
    method: 'get',
    path: '/tts/syntheses/:synthesisId/timings',
    tag: 'TTS',
    auth: true,
    summary: 'When each word of a succeeded synthesis is spoken (or WebVTT captions with ?format=vtt)',
    description:
      "Taken from eSpeak NG's own word events (each word's place in the text and its sample position), through the time stretch " +
      "and the resampling: `start_ms` is when the word starts in the audio, `end_ms` the next word's start (the end of the audio " +
      'for the last); `char_start` and `char_end` count Unicode code points of the text, 0-based, end exclusive, and `word` is ' +
      'the text between them. eSpeak NG speaks a number or an abbreviation as one word. With `?format=vtt` the answer is ' +
      "`text/vtt`: one cue per sentence, from its first word's start to its last word's end. Before the synthesis has " +
      'succeeded: 409 `conflict` with `details.state`.',
    params: { synthesisId: uuidParam },
    query: {
      schema: {
        type: 'object',
        properties: { format: { type: 'string', enum: ['json', 'vtt'], default: 'json' } },
      },
    },
    graphql: {
      kind: 'query',
      field: 'synthesisTimings',
      args: idFrom('synthesisId'),
      select: selection(WordTimings.items as JsonSchema),
    },
    text: { param: 'format', value: 'vtt', field: 'synthesisCaptions', contentType: 'text/vtt' },
    status: 200,
    response: WordTimings,
    errors: ['validation_error', 'unauthorized', 'not_found', 'conflict'],
  },
];
