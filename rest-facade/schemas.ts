// JSON Schemas of the REST bodies: used to validate requests and to write the OpenAPI document.
export type JsonSchema = Record<string, unknown>;

export const ErrorObject: JsonSchema = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: {
      type: 'string',
      description: 'Error code',
      enum: [
        'validation_error', 'unauthorized', 'forbidden', 'not_found', 'method_not_allowed', 'conflict',
        'payload_too_large', 'unsupported_media_type', 'rate_limit_exceeded', 'internal_error', 'service_unavailable',
      ],
    },
    message: { type: 'string', description: 'Human-readable message' },
    details: { type: 'object', additionalProperties: true, description: 'Extra information, e.g. messages per field' },
  },
};

export const CommandAck: JsonSchema = {
  type: 'object',
  required: ['id', 'message'],
  properties: { id: { type: 'string', format: 'uuid' }, message: { type: 'string' } },
};

export const LoginRequest: JsonSchema = {
  type: 'object',
  required: ['username', 'password'],
  additionalProperties: false,
  properties: {
    username: { type: 'string', minLength: 1, maxLength: 1024, pattern: '\\S', description: '1–64 characters after trimming' },
    password: { type: 'string', minLength: 8, maxLength: 1024 },
  },
};

export const RefreshRequest: JsonSchema = {
  type: 'object',
  required: ['refresh_token'],
  additionalProperties: false,
  properties: { refresh_token: { type: 'string', minLength: 1, maxLength: 8192 } },
};

export const TokenSet: JsonSchema = {
  type: 'object',
  required: ['access_token', 'refresh_token', 'expires_in', 'token_type', 'session_id'],
  properties: {
    access_token: { type: 'string', description: 'JWT access token, valid for 1 hour' },
    refresh_token: { type: 'string', description: 'JWT refresh token, valid for 90 days; spent on use' },
    expires_in: { type: 'integer', description: 'Lifetime of the access token in seconds', example: 3600 },
    token_type: { type: 'string', enum: ['Bearer'] },
    session_id: { type: 'string', format: 'uuid' },
  },
};

export const Session: JsonSchema = {
  type: 'object',
  required: ['session_id', 'user_id', 'expires_at', 'created_at', 'last_activity_at', 'state'],
  properties: {
    session_id: { type: 'string', format: 'uuid' },
    user_id: { type: 'string', format: 'uuid' },
    expires_at: { type: 'string', format: 'date-time', description: 'Expiry of the latest access token issued in the session' },
    created_at: { type: 'string', format: 'date-time' },
    last_activity_at: { type: 'string', format: 'date-time', description: 'Moves forward as the session is used (at most one write a minute)' },
    state: { type: 'string', enum: ['active', 'revoked', 'expired'] },
  },
};

export const Health: JsonSchema = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ok', 'ready', 'not_ready'] },
    checks: { type: 'object', additionalProperties: { type: 'string', enum: ['up', 'down'] } },
  },
};

export const components = { ErrorObject, CommandAck, LoginRequest, RefreshRequest, TokenSet, Session, Health };

export const ref = (name: keyof typeof components) => ({ $ref: `#/components/schemas/${name}` });

export const uuidParam: JsonSchema = { type: 'string', format: 'uuid' };
