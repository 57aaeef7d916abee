// The duplicate key of a link: the URL normalised (WHATWG parsing lower-cases the scheme and
// host, drops the default port and punycodes the host), without its fragment and tracking
// parameters, the rest of the query sorted; its sha256 is the key stored.
import { createHash } from 'node:crypto';

/** What a link may be (the OpenAPI document's pattern too); one that matches but does not parse is kept and fails enrichment. */
export const URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+([/?#]\\S*)?$';

/** Query parameters that say where a click came from, not what was fetched. */
const TRACKING =
  /^(utm_.*|fbclid|gclid|dclid|gbraid|wbraid|msclkid|mc_cid|mc_eid|igshid|yclid|_hsenc|_hsmi|mkt_tok|ref_src)$/i;

/** A parsed http(s) URL, or null for anything else (a relative URL, another scheme, a host-less one). */
export function parseHttpUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return null;
  return url;
}

export function normaliseUrl(url: URL): string {
  const n = new URL(url.href);
  n.hash = '';
  const kept = [...n.searchParams.entries()].filter(([name]) => !TRACKING.test(name));
  kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  n.search = new URLSearchParams(kept).toString();
  if (n.pathname === '') n.pathname = '/';
  return n.href;
}

export const urlKey = (url: URL): string => createHash('sha256').update(normaliseUrl(url)).digest('hex');
