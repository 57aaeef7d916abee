// A small JSON client for the tests: real HTTP against the running server.
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; token?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export function api(baseUrl: string) {
  return {
    get: <T = any>(path: string, opts?: Parameters<typeof request>[3]) => request<T>(baseUrl, 'GET', path, opts),
    post: <T = any>(path: string, body?: unknown, opts?: Parameters<typeof request>[3]) =>
      request<T>(baseUrl, 'POST', path, { ...opts, body }),
    delete: <T = any>(path: string, opts?: Parameters<typeof request>[3]) => request<T>(baseUrl, 'DELETE', path, opts),
    graphql: <T = any>(query: string, variables?: Record<string, unknown>, token?: string) =>
      request<T>(baseUrl, 'POST', '/graphql', { body: { query, variables }, token }),
  };
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Logs in through the facade; the token set in REST's snake_case. */
export async function login(baseUrl: string, credentials: { username: string; password: string }) {
  const res = await api(baseUrl).post('/api/v1/auth/login', credentials);
  if (res.status !== 202) throw new Error(`login as ${credentials.username} failed: ${res.status} ${res.text}`);
  return res.body as { access_token: string; refresh_token: string; session_id: string; expires_in: number };
}

/** Creates a user through the admin-only GraphQL mutation and logs them in. */
export async function createUserAndLogin(
  baseUrl: string,
  adminToken: string,
  username: string,
  password = 'a long enough password',
) {
  const res = await api(baseUrl).graphql(
    'mutation ($u: String!, $p: String!) { createUser(username: $u, password: $p) { id username } }',
    { u: username, p: password },
    adminToken,
  );
  if (res.body?.errors) throw new Error(`createUser ${username}: ${JSON.stringify(res.body.errors)}`);
  const tokens = await login(baseUrl, { username, password });
  return { id: res.body.data.createUser.id as string, username, password, token: tokens.access_token, tokens };
}
