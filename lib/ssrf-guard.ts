// The guard on every request this service makes to an address a user gave (the Vault's fetcher,
// webhook deliveries): one module for both, so there is one rule to review.
//
// It resolves the name itself and connects to the very address it checked, so a DNS answer that
// changes between the check and the connection (rebinding) cannot slip past it. Only public
// unicast addresses pass: loopback, private, link-local, CGNAT, multicast, broadcast, reserved,
// unspecified, IPv6's reserved ::/8 (IPv4-mapped and IPv4-compatible) and IPv4-embedding IPv6
// (6to4, NAT64, Teredo) are refused, on the first request and on every redirect (each redirect is
// a new connection through the same check). A refused address passes only when the URL's host,
// as written, is listed in the allow-list, with its port or for every port.
import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent, Dispatcher } from 'undici';

/** The connection was refused before anything was sent: the address is not a public one. */
export class BlockedAddressError extends Error {
  readonly code = 'blocked_address';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`${host} resolves to ${address}, which is not a public address`);
    this.name = 'BlockedAddressError';
  }
}

/** True when the error, or any error it was caused by, is the guard's refusal. */
export function isBlockedAddress(err: unknown): err is BlockedAddressError {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof BlockedAddressError || (e as { code?: unknown }).code === 'blocked_address') return true;
  }
  return false;
}

/**
 * IPv6's reserved `::/8`: the unspecified and loopback addresses, IPv4-mapped and -translated, and
 * the IPv4-compatible `::a.b.c.d` that URLs write as `[::7f00:1]` (ipaddr.js calls that one
 * `unicast`; Linux connects it to 127.0.0.1). Nothing in it is a public address.
 */
const RESERVED_V6 = ipaddr.parseCIDR('::/8');

/** Public unicast only; anything that does not parse is not public either. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && parsed.match(RESERVED_V6)) return false;
  return parsed.range() === 'unicast';
}

/**
 * An allow-list entry: `host` (every port of it) or `host:port` (that port only; `[v6]:port` for
 * IPv6). Hosts are as written in URLs, lower case, IPv6 without brackets.
 */
export interface AllowedHost {
  host: string;
  port: number | null;
}

export function parseAllowedHost(entry: string): AllowedHost | null {
  const text = entry.trim().toLowerCase();
  if (!text) return null;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  let host: string;
  let port: string | undefined;
  if (bracketed) [, host, port] = bracketed;
  else if (ipaddr.IPv6.isValid(text)) host = text;
  else {
    const withPort = /^([^:]+):(\d{1,5})$/.exec(text);
    if (withPort) [, host, port] = withPort;
    else if (text.includes(':')) return null;
    else host = text;
  }
  const number = port === undefined ? null : Number(port);
  if (number !== null && !(number >= 1 && number <= 65535)) return null;
  return { host, port: number };
}

type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export interface GuardOptions {
  /**
   * Hosts, as written in URLs, whose refused addresses pass: `host` for every port of it,
   * `host:port` (`[v6]:port`) for one port only (parseAllowedHost).
   */
  allowHosts?: readonly string[];
  /** Name resolution; the system resolver unless a test gives its own. */
  resolve?: Resolve;
  /** Connection timeout in ms (the caller's own deadline covers the whole exchange). */
  connectTimeoutMs?: number;
}

const systemResolve: Resolve = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * An undici dispatcher whose every connection goes through the guard. Pass it as `dispatcher`
 * to undici's `request`/`fetch`; redirects followed by the caller connect through it again.
 * The allow-list is checked now; undici is loaded and the agent made on first use (a process
 * that sends no webhook and fetches no page does not hold undici's 8 MiB: issue 44).
 */
export function guardedAgent(options: GuardOptions = {}): Dispatcher {
  const make = guardedAgentMaker(options);
  let agent: Agent | undefined;
  return new Proxy({} as Dispatcher, {
    get(_target, property) {
      agent ??= make();
      const value = Reflect.get(agent, property, agent) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(agent) : value;
    },
  });
}

function guardedAgentMaker(options: GuardOptions): () => Agent {
  // Host → the ports listed for it; null: every port.
  const allowed = new Map<string, Set<number> | null>();
  for (const entry of options.allowHosts ?? []) {
    if (!entry.trim()) continue;
    const parsed = parseAllowedHost(entry);
    // At start (the agent is made once): a misspelt entry must not silently allow nothing or more.
    if (!parsed) throw new Error(`The allow-list entry "${entry}" is neither a host nor host:port.`);
    const ports = allowed.get(parsed.host);
    if (parsed.port === null || ports === null) allowed.set(parsed.host, null);
    else allowed.set(parsed.host, new Set([...(ports ?? []), parsed.port]));
  }
  const resolve = options.resolve ?? systemResolve;
  const timeout = options.connectTimeoutMs ?? 10_000;

  return () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Agent, buildConnector } = require('undici') as typeof import('undici');
    const connectLiteral = buildConnector({ timeout });
    return new Agent({
      connect(connectOptions, callback) {
        const host = unbracketed(connectOptions.hostname.toLowerCase());
        const port = Number(connectOptions.port) || (connectOptions.protocol === 'https:' ? 443 : 80);
        const ports = allowed.get(host);
        const listed = ports === null || (ports !== undefined && ports.has(port));
        const passes = (address: string) => listed || isPublicAddress(address);

        if (ipaddr.isValid(host)) {
          // A literal address: Node would not look it up, so it is checked here.
          if (!passes(host)) return callback(new BlockedAddressError(host, host), null);
          return connectLiteral(connectOptions, callback);
        }
        // Resolved once, checked, and the socket is handed only the checked addresses.
        resolve(host).then(
          (addresses) => {
            const permitted = addresses.filter((a) => passes(a.address));
            if (!permitted.length) {
              return callback(new BlockedAddressError(host, addresses[0]?.address ?? 'nothing'), null);
            }
            const lookup: LookupFunction = (_name, lookupOptions, done) => {
              if (lookupOptions.all) return (done as (e: null, a: LookupAddress[]) => void)(null, permitted);
              done(null, permitted[0].address, permitted[0].family);
            };
            // undici hands the socket its connector's options, so the checked lookup needs a connector of its own.
            buildConnector({ timeout, lookup })(connectOptions, callback);
          },
          (err: Error) => callback(err, null),
        );
      },
    });
  };
}
