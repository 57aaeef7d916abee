// The REST interface at a glance: each /api/v1 endpoint, the GraphQL operation it runs and
// how the answer becomes status, body and Location. Nothing else in the facade knows a route.
import type { RouteSpec } from './route-spec';
import { CommandAck, LoginRequest, RefreshRequest, Session, TokenSet, uuidParam } from './schemas';

const SESSION_FIELDS = `session_id: id user_id: userId expires_at: expiresAt created_at: createdAt last_activity_at: lastActivityAt state`;
const TOKEN_FIELDS = `access_token: accessToken refresh_token: refreshToken expires_in: expiresIn token_type: tokenType session_id: sessionId`;

export const routes: RouteSpec[] = [
  // ---- Auth -------------------------------------------------------------------------------
  {
    method: 'post', path: '/auth/login', tag: 'Auth', auth: false,
    summary: 'Log in with username and password',
    description: 'Creates a session and returns its tokens. Unknown user and wrong password give the same answer. ' +
      'Rate limited: 5 failed attempts per username and client address, 100 attempts per client address, per 15 minutes.',
    body: LoginRequest,
    operation: `mutation Login($username: String!, $password: String!) { result: login(username: $username, password: $password) { ${TOKEN_FIELDS} } }`,
    variables: ({ body }) => ({ username: body.username, password: body.password }),
    status: 202,
    location: (r) => `/api/v1/auth/session/${r.session_id}`,
    response: TokenSet,
    errors: ['validation_error', 'unauthorized', 'rate_limit_exceeded'],
  },
  {
    method: 'post', path: '/auth/refresh', tag: 'Auth', auth: false,
    summary: 'Exchange a refresh token for a new token set',
    description: 'Rotation: the presented refresh token is spent. Presenting a spent refresh token revokes the session.',
    body: RefreshRequest,
    operation: `mutation Refresh($refreshToken: String!) { result: refreshSession(refreshToken: $refreshToken) { ${TOKEN_FIELDS} } }`,
    variables: ({ body }) => ({ refreshToken: body.refresh_token }),
    status: 202,
    location: (r) => `/api/v1/auth/session/${r.session_id}`,
    response: TokenSet,
    errors: ['validation_error', 'unauthorized'],
  },
  {
    method: 'post', path: '/auth/logout', tag: 'Auth', auth: true,
    summary: "Revoke the caller's session",
    operation: `mutation Logout { result: logout { id } }`,
    ack: 'Session revoked.',
    status: 202,
    location: (r) => `/api/v1/auth/session/${r.id}`,
    response: CommandAck,
    errors: ['unauthorized'],
  },
  {
    method: 'get', path: '/auth/session', tag: 'Auth', auth: true,
    summary: "The session of the caller's token",
    operation: `query CurrentSession { result: currentSession { ${SESSION_FIELDS} } }`,
    status: 200,
    response: Session,
    errors: ['unauthorized', 'not_found'],
  },
  {
    method: 'get', path: '/auth/session/:sessionId', tag: 'Auth', auth: true,
    summary: 'A session of the caller, by id',
    params: { sessionId: uuidParam },
    operation: `query SessionById($id: ID!) { result: session(id: $id) { ${SESSION_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.sessionId }),
    status: 200,
    response: Session,
    errors: ['validation_error', 'unauthorized', 'not_found'],
  },
];
