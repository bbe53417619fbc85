import { BlockList, isIP } from 'node:net';

/**
 * Who the client is behind a load balancer (docs/limits.md "Client addresses behind a proxy"). The sign-in
 * throttle and the per-address body budget key on the client's address; behind HAProxy every socket peer is
 * the load balancer, so the address must come from `X-Forwarded-For` — but only when the peer is one of the
 * configured proxies (TRUSTED_PROXIES), since anyone else could write anything there.
 */
export interface TrustedProxies {
  /** Whether `address` (an IP as text) is a configured proxy. */
  has(address: string): boolean;
  /** The list as configured, for messages and docs. */
  readonly text: string;
}

/** No proxy trusted: the socket peer is the client (the default). */
export const NO_TRUSTED_PROXIES: TrustedProxies = { has: () => false, text: '' };

/**
 * Parses `TRUSTED_PROXIES`: comma-separated IPv4/IPv6 addresses or CIDR blocks (`10.0.0.0/8`, `::1`,
 * `fd00::/8`). Throws Error naming the first bad entry.
 */
export function parseTrustedProxies(raw: string): TrustedProxies {
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0) return NO_TRUSTED_PROXIES;
  const list = new BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const ip = slash === -1 ? entry : entry.slice(0, slash);
    const family = isIP(ip);
    if (family === 0) throw new Error(`must be IP addresses or CIDR blocks, got "${entry}"`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (slash === -1) {
      list.addAddress(ip, type);
      continue;
    }
    const bits = entry.slice(slash + 1);
    const max = family === 4 ? 32 : 128;
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max)
      throw new Error(`the prefix length of "${entry}" must be 0–${max}`);
    list.addSubnet(ip, Number(bits), type);
  }
  return {
    has: (address) => {
      const a = plainAddress(address);
      const family = isIP(a);
      return family !== 0 && list.check(a, family === 4 ? 'ipv4' : 'ipv6');
    },
    text: entries.join(','),
  };
}

/** `::ffff:10.0.0.1` (an IPv4 peer of a dual-stack socket) is `10.0.0.1`; other addresses as they are. */
export function plainAddress(address: string): string {
  const a = address.trim();
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/**
 * The client's address: the socket peer, unless the peer is a trusted proxy — then the right-most address of
 * `X-Forwarded-For` that is not a trusted proxy (each proxy appends the address it was connected from, so the
 * entries right of the first untrusted one are our own proxies' and those left of it are whatever the client
 * wrote). An entry that is not an IP address ends the walk at the hop right of it; a chain of trusted proxies
 * only gives its left-most entry.
 */
export function clientAddressOf(peer: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  let client = plainAddress(peer);
  if (forwardedFor === undefined || !trusted.has(client)) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = plainAddress(hops[i]!);
    if (isIP(hop) === 0) return client;
    client = hop;
    if (!trusted.has(hop)) return hop;
  }
  return client;
}
