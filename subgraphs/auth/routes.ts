// The auth module's REST routes: sign-in and sessions under /api/v1/auth, user and role
// administration under /api/v1/admin, API keys under both. Declarations only, each running one
// GraphQL operation of this module through the gateway (rest-facade/graphql-mapping.ts reads the
// selection off the response schema and the arguments off the body schema). Listed for the
// facade by module.ts; `authSchemas` are the ones the OpenAPI document names.
import { allScopes } from '../../lib/scopes';
import { configured } from '../../rest-facade/configured';
import { bodyArgs, graphqlField, pathArg, queryArg } from '../../rest-facade/graphql-mapping';
import {
  EXPECTED_VERSION,
  EXPECTED_VERSION_ARG,
  idFrom,
  PAGE_ARGS,
  PAGE_QUERY,
  pageQuery,
  VERSION_QUERY,
} from '../../rest-facade/route-parts';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { CommandAck, JsonSchema, pageSchema, trimmedText, uuidParam } from '../../rest-facade/schemas';

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

// ---- API keys (CONTRACT.md "Admin: integrations", docs/integrations.md) ----
const CreateApiKeyRequest: JsonSchema = {
  type: 'object',
  required: ['name', 'scopes'],
  additionalProperties: true,
  properties: {
    name: trimmedText(1, 100, 'What the key is for, 1 to 100 characters, trimmed'),
    scopes: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'string',
        // Read when the document and the validators are built, after the module list installed the catalogue.
        get enum() {
          return allScopes().filter((s) => s !== 'account:write');
        },
      },
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
const API_KEY_PARAMS = { keyId: uuidParam };

/** The schemas the OpenAPI document names (components/schemas), referred to wherever they are used. */
export const authSchemas: Record<string, JsonSchema> = {
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
};

export const authRoutes: RouteSpec[] = [
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
    noStore: true, // the tokens
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
    noStore: true, // the tokens
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'logout',
    method: 'post',
    path: '/auth/logout',
    tag: 'Auth',
    auth: true,
    summary: "Revoke the caller's session",
    description: 'Ends the session of the calling token: its refresh token no longer works; your other sessions stay.',
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
    description: 'The session the calling token was issued for, as GET /auth/session/{sessionId} shows it.',
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
    description: 'One of your sessions (GET /auth/sessions lists them); one that is not yours is 404 `not_found`.',
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
    description: "Signs out everywhere else: every session of yours but the caller's is revoked, and counted.",
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
    description: 'For admins: every user by username; `?query=` keeps those whose username starts with it.',
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
    description: 'For admins: one user by id; an unknown id is 404 `not_found`.',
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
  {
    operationId: 'disableUser',
    method: 'post',
    path: '/admin/users/:userId/disable',
    tag: 'Admin',
    auth: true,
    summary: 'Disable a user: refuse their logins and revoke every session of theirs',
    description:
      'Their tokens are refused by every part of the service within the event relay delay; their login answers like a wrong ' +
      'password. You cannot disable yourself (`forbidden`), nor the last enabled administrator (`conflict`). Disabling a disabled ' +
      'user changes nothing.',
    params: { userId: uuidParam },
    graphql: { kind: 'mutation', field: 'disableUser', args: idFrom('userId'), select: '{ id }' },
    status: 202,
    ack: 'User disabled.',
    location: (r) => `/api/v1/admin/users/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found', 'conflict'],
  },
  {
    operationId: 'enableUser',
    method: 'post',
    path: '/admin/users/:userId/enable',
    tag: 'Admin',
    auth: true,
    summary: 'Enable a disabled user',
    description: 'They can log in again; their old sessions stay revoked. Enabling an enabled user changes nothing.',
    params: { userId: uuidParam },
    graphql: { kind: 'mutation', field: 'enableUser', args: idFrom('userId'), select: '{ id }' },
    status: 202,
    ack: 'User enabled.',
    location: (r) => `/api/v1/admin/users/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
  {
    operationId: 'unlockUser',
    method: 'post',
    path: '/admin/users/:userId/unlock',
    tag: 'Admin',
    auth: true,
    summary: "Clear a user's failed-login counts",
    description:
      'Lifts the locks that failed logins put on their username: from each client address, and across all addresses.',
    params: { userId: uuidParam },
    graphql: { kind: 'mutation', field: 'unlockUser', args: idFrom('userId'), select: '{ id }' },
    status: 202,
    ack: 'User unlocked.',
    location: (r) => `/api/v1/admin/users/${r.id}`,
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
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

  // ---- API keys ----
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
    description: 'Names, prefixes, scopes and last use; a key itself is shown only once, when it is made.',
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
    description: 'Refused once no edge holds a cached exchange of it (API_KEY_CACHE_SECONDS, at most 60 s).',
    params: API_KEY_PARAMS,
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
    description: "For holders of admin:integrations: every user's keys with their owners, never the keys themselves.",
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
    description: "For holders of admin:integrations: revokes any user's key, as DELETE /auth/api-keys/{keyId} does.",
    params: API_KEY_PARAMS,
    graphql: { kind: 'mutation', field: 'adminRevokeApiKey', args: idFrom('keyId'), select: '{ id }' },
    status: 202,
    ack: 'API key revoked.',
    location: () => '/api/v1/admin/integrations/api-keys',
    response: CommandAck,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'not_found'],
  },
];
