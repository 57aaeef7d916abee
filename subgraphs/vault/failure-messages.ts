// What a failed item's `error` code means, in a sentence for the person reading it: the code
// stays the stable value to branch on, the message says what to do (and for an address refused
// by the SSRF guard, which setting lets an internal host through).

const MESSAGES: Record<string, string> = {
  blocked_address:
    'The address is not a public one, so it was not fetched. An operator allows an internal host by listing it, as written in the URL, in VAULT_FETCH_ALLOW_HOSTS.',
  timeout: 'The page did not arrive within VAULT_FETCH_TIMEOUT_MS.',
  too_many_redirects: 'The page redirected more than VAULT_FETCH_MAX_REDIRECTS times.',
  bad_redirect: 'The page redirected to an address that is not an http(s) URL.',
  dns_failed: 'The host name does not resolve.',
  fetch_failed: 'The page could not be fetched.',
  bad_encoding: 'The compressed answer is corrupt.',
  unsupported_encoding: 'The answer is compressed in a way the fetcher does not read.',
  invalid_url: 'The URL is not one the fetcher can read.',
  parse_timeout: 'Reading the content took longer than VAULT_PARSE_TIMEOUT_MS.',
  parse_failed: 'The content could not be read.',
  file_missing: "The item's stored file is missing.",
  interrupted: 'The workers that took it stopped VAULT_ENRICH_MAX_ATTEMPTS times before it was done.',
};

/** The sentence for a failure code; `http_<status>` names the status; null for no failure. */
export function failureMessage(code: string | null | undefined): string | null {
  if (!code) return null;
  const status = /^http_(\d{3})$/.exec(code);
  if (status) return `The page answered HTTP ${status[1]}.`;
  return MESSAGES[code] ?? null;
}
