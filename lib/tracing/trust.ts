// Who may decide a request's sampling with its `traceparent`: the callers of TRACE_TRUST_PARENT
// (addresses, CIDRs, Express's named subnets), and this service's own hops (the hop secret).
import type http from 'node:http';
import net from 'node:net';

/** The span attribute that says whether the incoming request's caller may decide its sampling. */
export const TRUSTED_PARENT_ATTRIBUTE = 'trace.parent_trusted';

/** The names Express's trust-proxy setting knows, as subnets. */
const NAMED_SUBNETS: Record<string, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  linklocal: [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  uniquelocal: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
};

/** TRACE_TRUST_PARENT as a block list: `loopback`, `linklocal`, `uniquelocal`, addresses and CIDRs. Throws on anything else. */
export function trustedCallers(list: string[]): net.BlockList {
  const blocks = new net.BlockList();
  for (const entry of list) {
    const named = Object.hasOwn(NAMED_SUBNETS, entry) ? NAMED_SUBNETS[entry] : undefined;
    if (named) {
      for (const [address, prefix, type] of named) blocks.addSubnet(address, prefix, type);
      continue;
    }
    const [address, prefix] = entry.split('/');
    const version = net.isIP(address);
    const bits = prefix === undefined ? (version === 6 ? 128 : 32) : Number(prefix);
    if (!version || !Number.isInteger(bits) || bits < 0 || bits > (version === 6 ? 128 : 32))
      throw new Error(`"${entry}" is not an address, a CIDR or loopback/linklocal/uniquelocal`);
    blocks.addSubnet(address, bits, version === 6 ? 'ipv6' : 'ipv4');
  }
  return blocks;
}

/** Whether a request presents the hop secret (lib/hop.ts `HopSecret`). */
export interface HopSecretCheck {
  presentedBy(headers: http.IncomingHttpHeaders): boolean;
}

/**
 * Whether a request's caller is trusted with its sampled flag: one of TRACE_TRUST_PARENT, or a
 * hop of this service (it presents the hop secret, SUBGRAPH_SECRET), wherever it runs.
 */
export function traceParentTrust(list: string[], hop?: HopSecretCheck): (req: http.IncomingMessage) => boolean {
  const byAddress = traceParentTrustByAddress(list);
  return hop ? (req) => hop.presentedBy(req.headers) || byAddress(req) : byAddress;
}

function traceParentTrustByAddress(list: string[]): (req: http.IncomingMessage) => boolean {
  if (!list.length) return () => false;
  const blocks = trustedCallers(list);
  return (req) => {
    const address = req.socket?.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
    const version = address ? net.isIP(address) : 0;
    return version !== 0 && blocks.check(address!, version === 6 ? 'ipv6' : 'ipv4');
  };
}
