// JSON Schemas of the REST bodies: used to validate requests, to write the OpenAPI document and
// (graphql-mapping.ts) to read each answer from GraphQL. A field is declared here once.
import { ERROR_STATUS } from '../lib/errors';
import { configured } from './configured';
import { graphqlField } from './graphql-mapping';

export type JsonSchema = Record<string, unknown>;

export const ErrorObject: JsonSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string', description: 'Error code', enum: Object.keys(ERROR_STATUS) },
    message: { type: 'string', description: 'Human-readable message' },
    details: { type: 'object', additionalProperties: true, description: 'Extra information, e.g. messages per field' },
  },
};

export const CommandAck: JsonSchema = {
  type: 'object',
  required: ['id', 'message'],
  properties: { id: { type: 'string', format: 'uuid' }, message: { type: 'string' } },
};

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

/** A list a page at a time: `{ items, next_cursor }`. */
export const pageSchema = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['items', 'next_cursor'],
  properties: {
    items: { type: 'array', items: item },
    next_cursor: {
      type: 'string',
      nullable: true,
      description: 'Pass as `cursor` for the next page; null on the last page',
    },
  },
});

/**
 * Text whose length is counted once surrounding white space is trimmed (the service stores it
 * trimmed): validation.ts trims before it checks, and the document states the rule as a pattern.
 */
export const trimmedText = (minLength: number, maxLength: number, description: string): JsonSchema => ({
  type: 'string',
  minLength,
  maxLength,
  'x-trimmed': true,
  description,
});

/** A field's schema with a sentence added to its description (e.g. what leaving it out means). */
const noting = (schema: JsonSchema, note: string): JsonSchema => ({
  ...schema,
  description: `${schema.description as string}. ${note}`,
});

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

export const LoginRequest: JsonSchema = {
  type: 'object',
  required: ['username', 'password'],
  additionalProperties: true, // unknown fields are ignored
  properties: {
    username: trimmedText(1, 64, '1–64 characters after trimming surrounding white space'),
    password: { type: 'string', minLength: 8, maxLength: 1024 },
  },
};

export const RefreshRequest: JsonSchema = {
  type: 'object',
  required: ['refresh_token'],
  additionalProperties: true, // unknown fields are ignored
  properties: { refresh_token: { type: 'string', minLength: 1, maxLength: 8192 } },
};

export const TokenSet: JsonSchema = {
  type: 'object',
  required: ['access_token', 'refresh_token', 'expires_in', 'token_type', 'session_id'],
  properties: {
    access_token: {
      type: 'string',
      description: `JWT access token, valid for ${configured('ACCESS_TOKEN_TTL_SECONDS', 'duration')}`,
    },
    refresh_token: {
      type: 'string',
      description: `JWT refresh token, valid for ${configured('REFRESH_TOKEN_TTL_SECONDS', 'duration')}; spent on use`,
    },
    expires_in: {
      type: 'integer',
      description: 'Lifetime of the access token in seconds',
      example: configured('ACCESS_TOKEN_TTL_SECONDS', 'number'),
    },
    token_type: { type: 'string', enum: ['Bearer'] },
    session_id: { type: 'string', format: 'uuid' },
  },
};

export const StreamTicket: JsonSchema = {
  type: 'object',
  required: ['ticket', 'expires_in'],
  properties: {
    ticket: { type: 'string', description: 'Single use; pass as `ticket` in the event stream URL' },
    expires_in: {
      type: 'integer',
      description: 'Seconds left to open the stream with it',
      example: configured('STREAM_TICKET_TTL_SECONDS', 'number'),
    },
  },
};

export const Session: JsonSchema = {
  type: 'object',
  required: ['session_id', 'user_id', 'expires_at', 'created_at', 'last_activity_at', 'state'],
  properties: {
    session_id: graphqlField('id', { type: 'string', format: 'uuid' }),
    user_id: { type: 'string', format: 'uuid' },
    expires_at: {
      type: 'string',
      format: 'date-time',
      description: 'Expiry of the latest access token issued in the session',
    },
    created_at: { type: 'string', format: 'date-time' },
    last_activity_at: {
      type: 'string',
      format: 'date-time',
      description: 'Moves forward as the session is used (at most one write a minute)',
    },
    state: { type: 'string', enum: ['active', 'revoked', 'expired'] },
  },
};

export const SessionListItem: JsonSchema = {
  type: 'object',
  required: ['session_id', 'created_at', 'last_activity_at', 'expires_at', 'user_agent', 'ip_address', 'current'],
  properties: {
    session_id: graphqlField('id', { type: 'string', format: 'uuid' }),
    created_at: { type: 'string', format: 'date-time' },
    last_activity_at: { type: 'string', format: 'date-time' },
    expires_at: {
      type: 'string',
      format: 'date-time',
      description: 'Expiry of the latest access token issued in the session',
    },
    user_agent: { type: 'string', nullable: true, description: 'The User-Agent of the login (at most 512 characters)' },
    ip_address: { type: 'string', nullable: true, description: 'The client address of the login' },
    current: { type: 'boolean', description: "True for the session of the caller's token" },
  },
};

export const SessionPage = pageSchema(SessionListItem);

export const SessionsRevoked: JsonSchema = {
  type: 'object',
  required: ['id', 'message', 'revoked'],
  properties: {
    id: { type: 'string', format: 'uuid', description: "The session that stays: the caller's" },
    message: { type: 'string' },
    revoked: { type: 'integer', minimum: 0, description: 'How many sessions were revoked' },
  },
};

const NEW_PASSWORD_RULE =
  `8–1024 characters, and hard to guess: a zxcvbn strength score of at least ${configured('PASSWORD_MIN_SCORE')} of 4 (PASSWORD_MIN_SCORE) ` +
  'with the common and English dictionaries; common passwords, names, keyboard walks and the username itself score low. ' +
  'Failing it is a `validation_error` naming the field, with the reason.';

export const ChangePasswordRequest: JsonSchema = {
  type: 'object',
  required: ['current_password', 'new_password'],
  additionalProperties: true, // unknown fields are ignored
  properties: {
    current_password: { type: 'string', minLength: 1, maxLength: 1024 },
    new_password: { type: 'string', minLength: 8, maxLength: 1024, description: NEW_PASSWORD_RULE },
  },
};

/** A role's name, its id. */
const ROLE_NAME_PATTERN = '^[a-z0-9_-]{1,32}$';

export const CreateUserRequest: JsonSchema = {
  type: 'object',
  required: ['username', 'password'],
  additionalProperties: true, // unknown fields are ignored
  properties: {
    username: trimmedText(1, 64, '1–64 characters after trimming surrounding white space; unique ignoring case'),
    password: { type: 'string', minLength: 8, maxLength: 1024, description: NEW_PASSWORD_RULE },
    roles: {
      type: 'array',
      maxItems: 10,
      example: ['user'],
      items: { type: 'string', pattern: ROLE_NAME_PATTERN },
      description:
        'Role names (GET /api/v1/admin/roles); `admin` makes an administrator. You give only scopes you hold. Left out: `user`',
    },
  },
};

export const User: JsonSchema = {
  type: 'object',
  required: ['id', 'username', 'roles', 'disabled', 'created_at', 'last_login_at', 'version'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    username: { type: 'string' },
    roles: { type: 'array', items: { type: 'string' } },
    disabled: {
      type: 'boolean',
      description: 'A disabled user cannot log in (the answer is that of a wrong password)',
    },
    created_at: { type: 'string', format: 'date-time' },
    last_login_at: { type: 'string', format: 'date-time', nullable: true },
    version: {
      type: 'integer',
      minimum: 1,
      description: '1 when created; every change (disable, enable, password) adds 1. DELETE must name it.',
    },
  },
};

export const UserPage = pageSchema(User);

/** `GET /auth/me`: the caller, their roles and what the credential can do. */
export const Me: JsonSchema = {
  type: 'object',
  required: [...(User.required as string[]), 'scopes'],
  properties: {
    ...(User.properties as Record<string, JsonSchema>),
    roles: {
      type: 'array',
      items: { type: 'string' },
      description: 'The roles the user holds, whatever the credential (an API key does not change them)',
    },
    scopes: {
      type: 'array',
      items: { type: 'string' },
      description:
        "What this credential can do now: with an access token, the union of the scopes of your roles (docs/roles-and-scopes.md); with an API key, the key's scopes ∩ those (never account:write)",
    },
  },
};

const SCOPE_NAMES: JsonSchema = {
  type: 'array',
  maxItems: 64,
  items: { type: 'string', maxLength: 64 },
  example: ['tts:read', 'tts:synthesize'],
  description:
    'Scope names (docs/roles-and-scopes.md); an unknown one is a validation_error. You give only scopes you hold',
};

export const Role: JsonSchema = {
  type: 'object',
  required: ['name', 'description', 'scopes', 'built_in', 'version', 'created_at', 'updated_at'],
  properties: {
    name: { type: 'string', pattern: ROLE_NAME_PATTERN, description: "The role's id; never changes" },
    description: { type: 'string', nullable: true },
    scopes: { type: 'array', items: { type: 'string' } },
    built_in: { type: 'boolean', description: '`admin` and `user`: read-only' },
    version: { type: 'integer', minimum: 1, description: 'PATCH and DELETE name it' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export const RoleList: JsonSchema = {
  type: 'object',
  required: ['items'],
  properties: { items: { type: 'array', items: Role } },
};

export const CreateRoleRequest: JsonSchema = {
  type: 'object',
  required: ['name', 'scopes'],
  additionalProperties: true, // unknown fields are ignored
  properties: {
    name: { type: 'string', pattern: ROLE_NAME_PATTERN, description: '1–32 of a-z, 0-9, _ and -; the id' },
    description: { type: 'string', maxLength: 200, nullable: true },
    scopes: SCOPE_NAMES,
  },
};

export const UpdateRoleRequest: JsonSchema = {
  type: 'object',
  additionalProperties: true, // unknown fields are ignored
  properties: {
    description: { type: 'string', maxLength: 200, nullable: true, description: 'Left out: unchanged; null: cleared' },
    scopes: {
      ...SCOPE_NAMES,
      description: `${SCOPE_NAMES.description as string}. The new full set; left out: unchanged`,
    },
  },
};

export const SetUserRolesRequest: JsonSchema = {
  type: 'object',
  required: ['roles'],
  additionalProperties: true, // unknown fields are ignored
  properties: {
    roles: {
      type: 'array',
      maxItems: 32,
      items: { type: 'string', pattern: ROLE_NAME_PATTERN },
      example: ['user'],
      description: 'The full set of roles the user holds from now on',
    },
  },
};

/** What a role command answers: the role's name is its id. */
export const RoleAck: JsonSchema = {
  type: 'object',
  required: ['id', 'message'],
  properties: { id: { type: 'string', pattern: ROLE_NAME_PATTERN }, message: { type: 'string' } },
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
export const UpdateVoiceRequest: JsonSchema = {
  type: 'object',
  additionalProperties: true, // unknown fields are ignored
  description:
    'Any of the fields, each with the rules of voice creation; a field left out stays as it is. `description` and ' +
    '`voice_blend` may be null to clear them.',
  // At least one known field (unknown ones are dropped, so they do not count).
  anyOf: Object.keys(VOICE_CHANGES).map((field) => ({ required: [field] })),
  'x-one-of-error': { field: 'body', message: `give at least one of ${Object.keys(VOICE_CHANGES).join(', ')}` },
  properties: VOICE_CHANGES,
};

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

export const EventFrame: JsonSchema = {
  type: 'string',
  description:
    'Frames of `id: <position>`, `event: <type>`, `data: <JSON>`; the JSON has `type`, `id` (the resource), `occurred_at`, ' +
    "`event_id`, `user_id` and the resource's fields.",
  example:
    'id: 42\nevent: voice.created\ndata: {"type":"voice.created","id":"…","occurred_at":"2026-01-01T00:00:00.000Z","name":"Calm"}\n\n',
};

export const Health: JsonSchema = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ok', 'ready', 'not_ready'] },
    checks: { type: 'object', additionalProperties: { type: 'string', enum: ['up', 'down', 'degraded'] } },
    details: {
      type: 'object',
      additionalProperties: true,
      description: 'Figures behind the checks, e.g. `synthesis.live_workers`, `synthesis.oldest_queued_age_seconds`',
    },
  },
};

/** The named schemas of the document: wherever one of them is used, the document refers to it by name. */
export const components = {
  ErrorObject,
  CommandAck,
  LoginRequest,
  RefreshRequest,
  TokenSet,
  StreamTicket,
  Session,
  SessionListItem,
  SessionPage,
  SessionsRevoked,
  ChangePasswordRequest,
  CreateUserRequest,
  User,
  UserPage,
  Me,
  Role,
  RoleList,
  RoleAck,
  CreateRoleRequest,
  UpdateRoleRequest,
  SetUserRolesRequest,
  CreateVoiceRequest,
  UpdateVoiceRequest,
  Voice,
  VoicePage,
  SynthesisRequest,
  Synthesis,
  SynthesisPage,
  BaseVoice,
  BaseVoiceList,
  EventFrame,
  Health,
  SynthesisAck,
  SynthesisStatus,
};

export const uuidParam: JsonSchema = { type: 'string', format: 'uuid' };

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
