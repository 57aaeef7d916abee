// The one rule for a webhook's URL, applied by the service to REST and GraphQL alike (the REST
// schema's pattern is the same text, for the OpenAPI document and an early 400). GraphQL took
// what REST refused: `[::1]`, `2130706434`, `0x7f.2`, `127.2` (issue 41, finding 10), forms whose
// only use is to slip past a filter that reads dotted quads. The host, as written, is a DNS name
// (its last label starts with a letter) or a dotted quad of four decimal octets; no IPv6 literal,
// no credentials. Whether the address it resolves to may be reached is the SSRF guard's
// question, asked at every delivery (lib/ssrf-guard.ts).
const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const HOST = `(([A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*|(${OCTET}\\.){3}${OCTET})`;
const PORT = '(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?';

export const WEBHOOK_URL_PATTERN = `^https?://${HOST}${PORT}([/?#][^\\s]*)?$`;
const WEBHOOK_URL = new RegExp(WEBHOOK_URL_PATTERN);

/** Why a webhook URL is refused, or null. */
export function webhookUrlProblem(url: string): string | null {
  if (url.length < 1 || url.length > 2048) return 'must be 1 to 2048 characters';
  if (!WEBHOOK_URL.test(url))
    return 'must be an http(s) URL whose host is a name or a dotted quad (no IPv6 or numeric shorthand literals, no credentials)';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an http(s) URL';
  }
  if (parsed.username || parsed.password) return 'must not hold credentials';
  return null;
}
