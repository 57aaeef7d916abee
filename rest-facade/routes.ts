// The REST interface at a glance: each /api/v1 endpoint, the GraphQL operation it runs and
// how the answer becomes status, body and Location. Nothing else in the facade knows a route.
// What a route reads and sends is declared once, in its schemas (schemas.ts): graphql-mapping.ts
// derives the operation's selection and arguments from them.
import { configured } from './configured';
import { bodyArgs, pathArg, queryArg, selection } from './graphql-mapping';
import {
  EXPECTED_VERSION,
  EXPECTED_VERSION_ARG,
  idFrom,
  MAX_PAGE_SIZE,
  PAGE_ARGS,
  PAGE_QUERY,
  pageQuery,
  VERSION_QUERY,
} from './route-parts';
import type { RouteSpec } from './route-spec';
import { SCOPES } from '../lib/scopes';
import { subgraphRoutes } from '../subgraphs/routes';
import {
  BaseVoice,
  WordTimings,
  BaseVoiceList,
  ChangePasswordRequest,
  CommandAck,
  CreateRoleRequest,
  CreateUserRequest,
  CreateVoiceRequest,
  EventFrame,
  JsonSchema,
  pageSchema,
  trimmedText,
  LoginRequest,
  Me,
  RefreshRequest,
  Role,
  RoleAck,
  RoleList,
  Session,
  SessionPage,
  SessionsRevoked,
  SetUserRolesRequest,
  StreamTicket,
  Synthesis,
  SYNTHESIS_STATES,
  SynthesisPage,
  SynthesisAck,
  SynthesisRequest,
  SynthesisStatus,
  TokenSet,
  UpdateRoleRequest,
  UpdateVoiceRequest,
  User,
  UserPage,
  uuidParam,
  Voice,
  VoicePage,
} from './schemas';

/** REST spells states in lower case; `error` is there only when it failed. */
const presentSynthesis = ({ id, state, error, ...synthesis }: Record<string, any>) => ({
  id,
  state: state.toLowerCase(),
  ...synthesis,
  ...(error == null ? {} : { error }),
});

/** A resume position, as EventSource sends it (empty when it has none). */
const LAST_EVENT_ID = { type: 'string', pattern: '^(\\d{1,15})?$' };

export { MAX_PAGE_SIZE, PAGE_QUERY };

export const routes: RouteSpec[] = [
  // ---- Auth -------------------------------------------------------------------------------
  {
    operationId: 'login',
    method: 'post',
    path: '/auth/login',
    tag: 'Auth',
    auth: false,
    summary: 'Log in with username and password',
    description:
      'Creates a session and returns its tokens. Unknown user and wrong password give the same answer. ' +
      `Rate limited: ${configured('LOGIN_MAX_FAILURES_PER_USER')} failed attempts per username and client address, ` +
      `${configured('LOGIN_MAX_FAILURES_PER_USERNAME')} per username from any addresses (then the username is locked until the window ` +
      'passes or an administrator unlocks it), ' +
      `${configured('LOGIN_MAX_ATTEMPTS_PER_CLIENT')} failed attempts per client address, per ${configured('LOGIN_RATE_WINDOW_SECONDS', 'duration')}. ` +
      `A login past the quota of ${configured('MAX_SESSIONS_PER_USER')} active sessions revokes your oldest session.`,
    body: LoginRequest,
    graphql: { kind: 'mutation', field: 'login', args: bodyArgs(LoginRequest) },
    status: 202,
    location: (r) => `/api/v1/auth/session/${r.session_id}`,
    response: TokenSet,
    errors: ['validation_error', 'unauthorized', 'rate_limit_exceeded'],
  },
  {
    operationId: 'refreshSession',
    method: 'post',
    path: '/auth/refresh',
    tag: 'Auth',
    auth: false,
    summary: 'Exchange a refresh token for a new token set',
    description:
      'Rotation: the presented refresh token is spent. Presenting a spent refresh token revokes the session.',
    body: RefreshRequest,
    graphql: { kind: 'mutation', field: 'refreshSession', args: bodyArgs(RefreshRequest) },
    status: 202,
    location: (r) => `/api/v1/auth/session/${r.session_id}`,
    response: TokenSet,
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'logout',
    method: 'post',
    path: '/auth/logout',
    tag: 'Auth',
    auth: true,
    summary: "Revoke the caller's session",
    graphql: { kind: 'mutation', field: 'logout', select: '{ id }' },
    ack: 'Session revoked.',
    status: 202,
    location: (r) => `/api/v1/auth/session/${r.id}`,
    response: CommandAck,
    // 403: an API key has no session to end.
    errors: ['unauthorized', 'forbidden'],
  },
  {
    operationId: 'getCurrentSession',
    method: 'get',
    path: '/auth/session',
    tag: 'Auth',
    auth: true,
    summary: "The session of the caller's token",
    graphql: { kind: 'query', field: 'currentSession' },
    status: 200,
    response: Session,
    errors: ['unauthorized', 'not_found'],
  },
  {
    operationId: 'getMe',
    method: 'get',
    path: '/auth/me',
    tag: 'Auth',
    auth: true,
    summary: 'The caller: user, roles and scopes',
    description:
      "The scopes are the union of your roles' (docs/roles-and-scopes.md). A change of your roles applies to your next request, " +
      'without a new login.',
    graphql: { kind: 'query', field: 'me' },
    status: 200,
    response: Me,
    errors: ['unauthorized'],
  },
  {
    operationId: 'getSession',
    method: 'get',
    path: '/auth/session/:sessionId',
    tag: 'Auth',
    auth: true,
    summary: 'A session of the caller, by id',
    params: { sessionId: uuidParam },
    graphql: { kind: 'query', field: 'session', args: idFrom('sessionId') },
    status: 200,
    response: Session,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },

  {
    operationId: 'createStreamTicket',
    method: 'post',
    path: '/auth/stream-ticket',
    tag: 'Auth',
    auth: true,
    summary: 'A ticket that opens an event stream without an Authorization header (browsers)',
    description:
      "A browser's EventSource cannot send a header: open `GET /api/v1/events?ticket=…` (or `/graphql/stream?ticket=…&query=…`) " +
      `with this ticket instead. It is valid for ${configured('STREAM_TICKET_TTL_SECONDS', 'seconds')} (STREAM_TICKET_TTL_SECONDS), opens one ` +
      'stream, and is bound to your session: the stream ends when the session is revoked. A used or expired ticket answers 401. ' +
      'Location is the stream URL, without the ticket (a credential has no place in a header that proxies log): add `?ticket=…` to it.',
    graphql: { kind: 'mutation', field: 'createStreamTicket' },
    status: 202,
    location: () => '/api/v1/events',
    response: StreamTicket,
    noStore: true, // the ticket is a credential
    errors: ['unauthorized'],
  },
  {
    operationId: 'listSessions',
    method: 'get',
    path: '/auth/sessions',
    tag: 'Auth',
    auth: true,
    summary: 'Your active sessions, newest first, a page at a time',
    description:
      '`current` is true for the session of the token you call with. Revoked and expired sessions are not listed.',
    query: PAGE_QUERY,
    graphql: { kind: 'query', field: 'sessions', args: PAGE_ARGS },
    status: 200,
    response: SessionPage,
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'revokeSession',
    method: 'delete',
    path: '/auth/sessions/:sessionId',
    tag: 'Auth',
    auth: true,
    summary: 'Revoke one of your sessions',
    description:
      "Its tokens stop working everywhere within the event relay delay. Another user's session is `not_found`. " +
      'Revoking one that has ended already changes nothing and is accepted too.',
    params: { sessionId: uuidParam },
    graphql: { kind: 'mutation', field: 'revokeSession', args: idFrom('sessionId'), select: '{ id }' },
    status: 202,
    ack: 'Session revoked.',
    location: (r) => `/api/v1/auth/session/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
  {
    operationId: 'revokeOtherSessions',
    method: 'delete',
    path: '/auth/sessions',
    tag: 'Auth',
    auth: true,
    summary: 'Revoke all your sessions except the current one',
    graphql: { kind: 'mutation', field: 'revokeOtherSessions', select: '{ currentSessionId revoked }' },
    status: 202,
    present: (r) => ({ id: r.currentSessionId, message: 'Every other session revoked.', revoked: r.revoked }),
    location: () => '/api/v1/auth/sessions',
    response: SessionsRevoked,
    errors: ['unauthorized'],
  },
  {
    operationId: 'changePassword',
    method: 'post',
    path: '/auth/password',
    tag: 'Auth',
    auth: true,
    summary: 'Change your password',
    description:
      'A wrong `current_password` answers 401 and counts toward the login limits of your username and address (429 once ' +
      'they are reached). A `new_password` that fails the policy answers 400 with `details.new_password`. Every other session ' +
      'of yours is revoked; the one you call with stays.',
    body: ChangePasswordRequest,
    graphql: { kind: 'mutation', field: 'changePassword', args: bodyArgs(ChangePasswordRequest), select: '{ id }' },
    status: 202,
    ack: 'Password changed; your other sessions are revoked.',
    location: () => '/api/v1/auth/sessions',
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'conflict', 'rate_limit_exceeded'],
  },

  // ---- Admin (scope admin:users, roles admin:roles; everyone else gets 403 forbidden) --------
  {
    operationId: 'listUsers',
    method: 'get',
    path: '/admin/users',
    tag: 'Admin',
    auth: true,
    summary: 'Users in username order, a page at a time',
    query: pageQuery({
      query: { type: 'string', maxLength: 64, description: 'Only usernames starting with this, ignoring case' },
    }),
    graphql: { kind: 'query', field: 'users', args: { query: queryArg('query', 'String'), ...PAGE_ARGS } },
    status: 200,
    response: UserPage,
    errors: ['validation_error', 'unauthorized', 'forbidden'],
  },
  {
    operationId: 'getUser',
    method: 'get',
    path: '/admin/users/:userId',
    tag: 'Admin',
    auth: true,
    summary: 'A user',
    params: { userId: uuidParam },
    graphql: { kind: 'query', field: 'user', args: idFrom('userId') },
    status: 200,
    response: User,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
  {
    operationId: 'createUser',
    method: 'post',
    path: '/admin/users',
    tag: 'Admin',
    auth: true,
    summary: 'Create a user',
    description: 'A username taken already (ignoring case) is a `conflict`. The password must pass the policy.',
    body: CreateUserRequest,
    graphql: { kind: 'mutation', field: 'createUser', args: bodyArgs(CreateUserRequest), select: '{ id }' },
    status: 202,
    ack: 'User created.',
    location: (r) => `/api/v1/admin/users/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'conflict'],
  },
  ...(['disable', 'enable', 'unlock'] as const).map((action): RouteSpec => ({
    operationId: `${action}User`,
    method: 'post',
    path: `/admin/users/:userId/${action}`,
    tag: 'Admin',
    auth: true,
    summary: {
      disable: 'Disable a user: refuse their logins and revoke every session of theirs',
      enable: 'Enable a disabled user',
      unlock: "Clear a user's failed-login counts",
    }[action],
    description: {
      disable:
        'Their tokens are refused by every part of the service within the event relay delay; their login answers like a wrong ' +
        'password. You cannot disable yourself (`forbidden`), nor the last enabled administrator (`conflict`). Disabling a disabled ' +
        'user changes nothing.',
      enable: 'They can log in again; their old sessions stay revoked. Enabling an enabled user changes nothing.',
      unlock:
        'Lifts the locks that failed logins put on their username: from each client address, and across all addresses.',
    }[action],
    params: { userId: uuidParam },
    graphql: { kind: 'mutation', field: `${action}User`, args: idFrom('userId'), select: '{ id }' },
    status: 202,
    ack: { disable: 'User disabled.', enable: 'User enabled.', unlock: 'User unlocked.' }[action],
    location: (r) => `/api/v1/admin/users/${r.id}`,
    response: CommandAck,
    errors: [
      'validation_error',
      'unauthorized',
      'forbidden',
      'not_found',
      ...(action === 'disable' ? (['conflict'] as const) : []),
    ],
  })),
  {
    operationId: 'deleteUser',
    method: 'delete',
    path: '/admin/users/:userId',
    tag: 'Admin',
    auth: true,
    summary: 'Delete a user at the version you expect',
    description:
      'Optimistic locking as for voices: `version` must equal the stored version, else `conflict` with ' +
      '`details.current_version`. Every session of the user ends at once; their voices and syntheses (with the audio) are deleted ' +
      'by the TTS service when it receives the `user.deleted` event, shortly after. You cannot delete yourself (`forbidden`), nor ' +
      'the last enabled administrator (`conflict`).',
    params: { userId: uuidParam },
    query: VERSION_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteUser',
      args: { ...idFrom('userId'), version: queryArg('version', 'Int!') },
      select: '{ id }',
    },
    status: 202,
    ack: 'User deleted.',
    location: (r) => `/api/v1/admin/users/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
  },
  {
    operationId: 'setUserRoles',
    method: 'put',
    path: '/admin/users/:userId/roles',
    tag: 'Admin',
    auth: true,
    summary: "Set a user's roles at the version you expect",
    description:
      "Needs `admin:roles`. The user's scopes become the union of the roles'; their next request has them, without a new " +
      'login. You give and take only scopes you hold (so no one raises their own), an unknown role is a `validation_error`, and ' +
      "no one takes `admin` from the last enabled administrator (`conflict`). `version` is the user's (`conflict` with " +
      '`details.current_version` when it has another).',
    params: { userId: uuidParam },
    query: VERSION_QUERY,
    body: SetUserRolesRequest,
    graphql: {
      kind: 'mutation',
      field: 'setUserRoles',
      args: { ...idFrom('userId'), version: queryArg('version', 'Int!'), ...bodyArgs(SetUserRolesRequest) },
      select: '{ id }',
    },
    status: 202,
    ack: 'Roles set.',
    location: (r) => `/api/v1/admin/users/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
  },
  {
    operationId: 'listRoles',
    method: 'get',
    path: '/admin/roles',
    tag: 'Admin',
    auth: true,
    summary: 'Every role: the built-in ones, then the custom ones by name',
    description: 'Needs `admin:roles`.',
    graphql: { kind: 'query', field: 'roles', select: Role },
    status: 200,
    present: (items) => ({ items }),
    response: RoleList,
    errors: ['unauthorized', 'forbidden'],
  },
  {
    operationId: 'getRole',
    method: 'get',
    path: '/admin/roles/:name',
    tag: 'Admin',
    auth: true,
    summary: 'A role',
    description: 'Needs `admin:roles`.',
    params: { name: { type: 'string', pattern: '^[a-z0-9_-]{1,32}$' } },
    graphql: { kind: 'query', field: 'role', args: { name: pathArg('name', 'String!') } },
    status: 200,
    etag: (r) => `"${r.version}"`,
    response: Role,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
  {
    operationId: 'createRole',
    method: 'post',
    path: '/admin/roles',
    tag: 'Admin',
    auth: true,
    summary: 'Create a custom role',
    description:
      'Needs `admin:roles`. You give only scopes you hold (`forbidden`); an unknown scope is a `validation_error`; a name taken ' +
      `already (the built-in \`admin\` and \`user\` too) is a \`conflict\`, as is one past ${configured('ROLES_MAX')} custom roles ` +
      '(`details.limit`).',
    body: CreateRoleRequest,
    graphql: { kind: 'mutation', field: 'createRole', args: bodyArgs(CreateRoleRequest), select: '{ id: name }' },
    status: 202,
    ack: 'Role created.',
    location: (r) => `/api/v1/admin/roles/${r.id}`,
    response: RoleAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'conflict'],
  },
  {
    operationId: 'updateRole',
    method: 'patch',
    path: '/admin/roles/:name',
    tag: 'Admin',
    auth: true,
    summary: 'Change a custom role at the version you expect',
    description:
      "Needs `admin:roles`, and every scope the role gives now or will give. Each holder's next request has the new scopes. The " +
      'built-in roles are read-only (`forbidden`). Optimistic locking as for voices (`?version=N` or `If-Match`).',
    params: { name: { type: 'string', pattern: '^[a-z0-9_-]{1,32}$' } },
    ...EXPECTED_VERSION,
    body: UpdateRoleRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateRole',
      select: '{ id: name version }',
      args: { name: pathArg('name', 'String!'), version: EXPECTED_VERSION_ARG, ...bodyArgs(UpdateRoleRequest) },
    },
    status: 202,
    ack: 'Role updated.',
    location: (r) => `/api/v1/admin/roles/${r.id}`,
    etag: (r) => `"${r.version}"`,
    response: RoleAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
  },
  {
    operationId: 'deleteRole',
    method: 'delete',
    path: '/admin/roles/:name',
    tag: 'Admin',
    auth: true,
    summary: 'Delete a custom role at the version you expect',
    description:
      'Needs `admin:roles`. While a user holds it: `conflict` with `details.users` (their ids, up to 100). The built-in roles are ' +
      'read-only (`forbidden`).',
    params: { name: { type: 'string', pattern: '^[a-z0-9_-]{1,32}$' } },
    query: VERSION_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteRole',
      args: { name: pathArg('name', 'String!'), version: queryArg('version', 'Int!') },
      select: '{ id: name }',
    },
    status: 202,
    ack: 'Role deleted.',
    location: (r) => `/api/v1/admin/roles/${r.id}`,
    response: RoleAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
  },

  // ---- TTS --------------------------------------------------------------------------------
  {
    operationId: 'listBaseVoices',
    method: 'get',
    path: '/tts/base-voices',
    tag: 'TTS',
    // The public catalogue (lib/scopes.ts PUBLIC_FIELDS).
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
            enum: ['wav', 'pcm', 'mp3', 'opus', 'flac'],
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
      formats: {
        wav: 'audio/wav',
        pcm: 'audio/pcm',
        mp3: 'audio/mpeg',
        opus: 'audio/ogg',
        flac: 'audio/flac',
      },
      stream: `query SynthesisAudioStream($id: ID!, $format: SpeechFormat!, $offset: Int!, $length: Int!) { result: synthesisStream(id: $id, format: $format, offset: $offset, length: $length) { chunk end } }`,
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

  // ---- Events -----------------------------------------------------------------------------
  {
    operationId: 'streamEvents',
    method: 'get',
    path: '/events',
    tag: 'Events',
    auth: true,
    summary: 'Your events, as Server-Sent Events',
    description:
      'A `text/event-stream` of your events: session.created, session.refreshed, session.revoked, voice.created, voice.updated (with `changed`: ' +
      'the changed fields, and `previous`: their former values), voice.deleted, and for each synthesis job synthesis.queued (committed with the ' +
      'request), synthesis.started (each time a worker takes it, with `attempt`), then synthesis.succeeded or synthesis.failed ' +
      '(or synthesis.canceled when canceled; synthesis.deleted when a finished one is deleted); synthesis events carry synthesis_id, state, voice_id, characters, duration_ms and error. ' +
      'Each frame has `id:` (a growing position), `event:` (the type) and `data:` (JSON: `type`, `id` of the resource, `occurred_at`, ' +
      `and the resource's fields). A comment line every ${configured('EVENT_HEARTBEAT_SECONDS', 'seconds')} keeps idle connections open. Reconnect with \`Last-Event-ID\` (or ` +
      '`last_event_id`) to receive everything after it first, with no gap and no duplicate. A position older than what is kept ' +
      `(${configured('EVENT_RETENTION_SECONDS', 'duration')}, EVENT_RETENTION_SECONDS) answers 410 \`resync_required\`: reload your data and connect without a position. The stream ends when ` +
      'your session is revoked, and when you read too slowly or stop reading for two heartbeat periods (resume with ' +
      'Last-Event-ID). Admins may pass `scope=all`. A position past the end of the stream answers 400 `validation_error`. ' +
      'The stream also ends when your access token expires, with a last `event: error` frame (`unauthorized`) telling you ' +
      `to reconnect with a fresh token. At most ${configured('EVENT_STREAMS_PER_USER')} streams of one user at once (EVENT_STREAMS_PER_USER, per server process; ` +
      'REST and GraphQL together): beyond that 429 `rate_limit_exceeded` with `Retry-After`.',
    query: {
      schema: {
        type: 'object',
        properties: {
          scope: { type: 'string', enum: ['own', 'all'], default: 'own' },
          types: {
            type: 'string',
            maxLength: 1000,
            description: 'Only these event types, comma-separated',
            example: 'voice.created,voice.deleted',
          },
          last_event_id: {
            type: 'string',
            pattern: '^\\d{1,15}$',
            description: 'Like the Last-Event-ID header; wins over it',
          },
          ticket: {
            type: 'string',
            maxLength: 4096,
            pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
            description: 'A stream ticket (POST /api/v1/auth/stream-ticket), instead of the Authorization header',
          },
        },
      },
    },
    graphql: {
      kind: 'subscription',
      field: 'events',
      args: {
        after: {
          type: 'ID',
          value: ({ query, headers }) => query.last_event_id ?? (headers['last-event-id'] || undefined),
        },
        types: {
          type: '[String!]',
          value: ({ query }) =>
            typeof query.types === 'string'
              ? query.types
                  .split(',')
                  .map((t) => t.trim())
                  .filter(Boolean)
              : undefined,
        },
        scope: { type: 'EventScope', value: ({ query }) => query.scope ?? 'own' },
      },
      select: '{ seq event_id: eventId type id: resourceId user_id: userId occurred_at: occurredAt data }',
    },
    headerParams: [
      {
        name: 'Last-Event-ID',
        schema: LAST_EVENT_ID,
        description: 'Resume after this event (EventSource sends it when it reconnects); empty: no position',
      },
    ],
    check: ({ headers }) => {
      const value = headers['last-event-id'];
      return value === undefined || (typeof value === 'string' && new RegExp(LAST_EVENT_ID.pattern).test(value))
        ? null
        : { 'Last-Event-ID': ['must be the id of an event (a stream position: digits)'] };
    },
    stream: {
      frame: ({ seq, data, ...event }) => ({
        id: seq,
        event: event.type,
        data: {
          ...data,
          type: event.type,
          id: event.id,
          occurred_at: event.occurred_at,
          event_id: event.event_id,
          user_id: event.user_id,
        },
      }),
    },
    status: 200,
    response: EventFrame,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'resync_required', 'rate_limit_exceeded'],
  },

  // ---- API keys (auth; CONTRACT.md "Admin: integrations", docs/integrations.md) ----
  ...apiKeyRoutes(),

  // ---- The modules made by `npm run new-subgraph`: each declares its own (subgraphs/routes.ts) --
  ...subgraphRoutes,
];

function apiKeyRoutes(): RouteSpec[] {
  const CreateApiKeyRequest: JsonSchema = {
    type: 'object',
    required: ['name', 'scopes'],
    additionalProperties: true,
    properties: {
      name: trimmedText(1, 100, 'What the key is for, 1 to 100 characters, trimmed'),
      scopes: {
        type: 'array',
        maxItems: 50,
        items: { type: 'string', enum: SCOPES.filter((s) => s !== 'account:write') },
        description: 'What it may do (never account:write); a key never has more than its owner has at the time',
      },
      expires_in_days: {
        type: 'integer',
        minimum: 1,
        maximum: 365,
        description: 'Days until it expires; left out: 90',
      },
    },
  };
  const ApiKeyCreated: JsonSchema = {
    type: 'object',
    required: ['id', 'key'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      key: { type: 'string', description: '`fvk_…`, shown only here: send it as `Authorization: Bearer <key>`' },
    },
  };
  const ApiKeyBody: JsonSchema = {
    type: 'object',
    required: ['id', 'user_id', 'name', 'prefix', 'scopes', 'created_at', 'expires_at', 'last_used_at'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      user_id: { type: 'string', format: 'uuid' },
      name: { type: 'string' },
      prefix: { type: 'string', description: 'The first characters of the key, to recognise it' },
      scopes: { type: 'array', items: { type: 'string' } },
      created_at: { type: 'string', format: 'date-time' },
      expires_at: { type: 'string', format: 'date-time' },
      last_used_at: {
        type: ['string', 'null'],
        format: 'date-time',
        description: 'Written at most once a minute',
      } as JsonSchema,
    },
  };
  const keyParams = { keyId: uuidParam };
  return [
    {
      operationId: 'createApiKey',
      method: 'post',
      path: '/auth/api-keys',
      tag: 'Auth',
      auth: true,
      summary: 'Create an API key for a script or a partner service (the key is shown once)',
      description:
        'The key works as `Authorization: Bearer <key>` wherever an access token does (REST, GraphQL, the event streams, ' +
        "speech), with the key's scopes ∩ yours at the time of use. Revoked or expired, it is refused within the revocation " +
        `bound. An API key cannot make or revoke keys. A key holds only scopes you hold (others: 403). At most ${configured('API_KEYS_PER_USER')} keys per user (409 beyond).`,
      body: CreateApiKeyRequest,
      graphql: { kind: 'mutation', field: 'createApiKey', args: bodyArgs(CreateApiKeyRequest) },
      status: 202,
      location: () => '/api/v1/auth/api-keys',
      response: ApiKeyCreated,
      noStore: true, // the key
      errors: ['validation_error', 'unauthorized', 'forbidden', 'conflict'],
    },
    {
      operationId: 'listApiKeys',
      method: 'get',
      path: '/auth/api-keys',
      tag: 'Auth',
      auth: true,
      summary: 'Your API keys (never the keys themselves), oldest first',
      query: PAGE_QUERY,
      graphql: { kind: 'query', field: 'apiKeys', args: PAGE_ARGS },
      status: 200,
      response: pageSchema(ApiKeyBody),
      errors: ['validation_error', 'unauthorized'],
    },
    {
      operationId: 'revokeApiKey',
      method: 'delete',
      path: '/auth/api-keys/:keyId',
      tag: 'Auth',
      auth: true,
      summary: 'Revoke one of your API keys',
      params: keyParams,
      graphql: { kind: 'mutation', field: 'revokeApiKey', args: idFrom('keyId'), select: '{ id }' },
      status: 202,
      ack: 'API key revoked.',
      location: () => '/api/v1/auth/api-keys',
      response: CommandAck,
      errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
    },
    {
      operationId: 'listAllApiKeys',
      method: 'get',
      path: '/admin/integrations/api-keys',
      tag: 'Admin',
      auth: true,
      summary: "Every user's API keys, oldest first (admin:integrations)",
      query: PAGE_QUERY,
      graphql: { kind: 'query', field: 'allApiKeys', args: PAGE_ARGS },
      status: 200,
      response: pageSchema(ApiKeyBody),
      errors: ['validation_error', 'unauthorized', 'forbidden'],
    },
    {
      operationId: 'adminRevokeApiKey',
      method: 'delete',
      path: '/admin/integrations/api-keys/:keyId',
      tag: 'Admin',
      auth: true,
      summary: "Revoke any user's API key (admin:integrations)",
      params: keyParams,
      graphql: { kind: 'mutation', field: 'adminRevokeApiKey', args: idFrom('keyId'), select: '{ id }' },
      status: 202,
      ack: 'API key revoked.',
      location: () => '/api/v1/admin/integrations/api-keys',
      response: CommandAck,
      errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
    },
  ];
}
