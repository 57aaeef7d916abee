// The auth module's event types, each with its payload's schema (lib/kit/typed-events.ts): the
// audit events (audit.ts) and user.created. Every audit event carries the `username` it concerns
// (that of a login attempt for an unknown name), never a password, token or key.
import { z } from 'zod';
import { eventType } from '../../lib/kit/typed-events';

/** An audit event's fields and the username audit.ts adds last. */
const audited = <S extends z.ZodRawShape>(shape: S) => z.strictObject({ ...shape, username: z.string() });

/** Who did it: a user's id, or `cli` (the users command). */
const by = z.string();
const strings = z.array(z.string());
/** The caller's address as the facade saw it (none when the connection had closed). */
const client_address = z.string().optional();

export const UserCreated = eventType(
  'user.created',
  z.strictObject({ user_id: z.string(), username: z.string(), roles: strings, by: by.optional() }),
);
export const UserDeleted = eventType('user.deleted', audited({ user_id: z.string(), by }));
export const UserDisabled = eventType('user.disabled', audited({ user_id: z.string(), by }));
export const UserEnabled = eventType('user.enabled', audited({ user_id: z.string(), by }));
/** An administrator cleared the user's login-failure counts. */
export const UserUnlocked = eventType('user.unlocked', audited({ user_id: z.string(), by }));
export const UserRolesChanged = eventType(
  'user.roles_changed',
  audited({ user_id: z.string(), roles: strings, previous_roles: strings, by }),
);
/** The user's new full set of scopes, which every process applies to their next request. */
export const UserScopesChanged = eventType(
  'user.scopes_changed', // lib/revocations.ts USER_SCOPES_CHANGED
  audited({ user_id: z.string(), scopes: strings }),
);
export const PasswordChanged = eventType(
  'password.changed',
  audited({ user_id: z.string(), by, session_id: z.string().optional() }),
);
export const SessionCreated = eventType(
  'session.created',
  audited({ session_id: z.string(), user_id: z.string(), client_address }),
);
export const SessionRefreshed = eventType('session.refreshed', audited({ session_id: z.string() }));
/** `session_id` is an API key's id when the key was revoked (its tokens' session). */
export const SessionRevoked = eventType('session.revoked', audited({ session_id: z.string(), reason: z.string() }));
/** A spent refresh token presented again: the session is revoked. */
export const RefreshReused = eventType('refresh.reused', audited({ session_id: z.string(), client_address }));
export const LoginFailed = eventType('login.failed', audited({ client_address, reason: z.string() }));
export const LoginLocked = eventType('login.locked', audited({ client_address, retry_after_seconds: z.number() }));
export const ApiKeyCreated = eventType(
  'api_key.created',
  audited({ api_key_id: z.string(), name: z.string(), prefix: z.string(), scopes: strings }),
);
export const ApiKeyRevoked = eventType(
  'api_key.revoked',
  audited({ api_key_id: z.string(), name: z.string(), prefix: z.string(), revoked_by: z.string() }),
);
const role = { role: z.string(), scopes: strings, by };
export const RoleCreated = eventType('role.created', audited(role));
/** `changed`: the role's fields the update gave. */
export const RoleUpdated = eventType('role.updated', audited({ ...role, changed: strings }));
export const RoleDeleted = eventType('role.deleted', audited(role));

export const authEvents = [
  UserCreated,
  UserDeleted,
  UserDisabled,
  UserEnabled,
  UserUnlocked,
  UserRolesChanged,
  UserScopesChanged,
  PasswordChanged,
  SessionCreated,
  SessionRefreshed,
  SessionRevoked,
  RefreshReused,
  LoginFailed,
  LoginLocked,
  ApiKeyCreated,
  ApiKeyRevoked,
  RoleCreated,
  RoleUpdated,
  RoleDeleted,
];
