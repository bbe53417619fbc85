import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { MAX_URL_LENGTH } from '../../../shared/vocabulary.js';

/**
 * Webhook targets must be public: a customer must not be able to make meterline call into its own
 * network (SSRF). At registration we refuse literal non-public addresses, localhost names and names that
 * resolve to a non-public address now; at delivery time the dispatcher resolves the host again and checks
 * every address with isPublicAddress() (DNS can change after registration, so that check is the one that binds).
 */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
  ['64:ff9b::', 96], // NAT64: embeds an IPv4 address
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID …)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

/**
 * IPv4-mapped IPv6 (::ffff:0:0/96): a socket to ::ffff:127.0.0.1 reaches 127.0.0.1, and no public service
 * needs this form, so none is trusted. A list of its own: BlockList matches IPv4 addresses against IPv6
 * rules in mapped form, so in NON_PUBLIC this entry would block every IPv4 address.
 */
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/** True for a globally routable unicast address. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) never are. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6 && IPV4_MAPPED.check(address, 'ipv6')) return false;
  return !NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** `localhost` and every `*.localhost` name resolve to loopback (RFC 6761). */
export function isLocalhostName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * Checks a webhook URL; returns why it is refused, or null when it is acceptable.
 * allowPrivate (WEBHOOKS_ALLOW_PRIVATE_URLS, for development and tests) also permits http://.
 */
export function webhookUrlProblem(raw: string, allowPrivate: boolean): string | null {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (raw !== raw.trim()) return 'must not have leading or trailing spaces';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  const allowed = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol)) return allowPrivate ? 'must use https:// or http://' : 'must use https://';
  if (url.username || url.password) return 'must not contain a user name or password';
  if (!url.hostname) return 'must name a host';
  if (allowPrivate) return null;
  // The WHATWG parser already normalised numeric forms (https://2130706433/ → 127.0.0.1).
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0 && !isPublicAddress(host))
    return 'must not point to a private, loopback, link-local or reserved address';
  if (isLocalhostName(host)) return 'must not point to localhost';
  return null;
}

/** A resolver with dns.promises.lookup's `{all: true}` shape; tests inject one to map names without DNS. */
export type AddressLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemLookup: AddressLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A delivery target refused by the SSRF rules; `reason` goes to the delivery log. */
export class RefusedTargetError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Delivery-time SSRF check: resolves the URL's host and returns the one address to connect to. Unless
 * allowPrivate, every address the name resolves to must be public (a name mixing public and private
 * answers is refused rather than trusted). The caller connects to exactly this address, never resolving
 * again, so DNS rebinding between check and connect cannot redirect the request.
 */
export async function resolveDeliveryAddress(
  url: URL,
  allowPrivate: boolean,
  lookup: AddressLookup = systemLookup,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = isIP(host);
  let answers: { address: string; family: number }[];
  if (literal !== 0) answers = [{ address: host, family: literal }];
  else {
    if (!allowPrivate && isLocalhostName(host)) throw new RefusedTargetError(`host ${host} is a localhost name`);
    try {
      answers = await lookup(host);
    } catch (err) {
      throw new RefusedTargetError(
        `host ${host} did not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    if (answers.length === 0) throw new RefusedTargetError(`host ${host} did not resolve`);
  }
  if (!allowPrivate) {
    const bad = answers.find((a) => !isPublicAddress(a.address));
    if (bad)
      throw new RefusedTargetError(
        literal !== 0 ? `address ${host} is not public` : `host ${host} resolves to non-public address ${bad.address}`,
      );
  }
  const first = answers[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** How long registration waits for DNS before accepting the name (delivery checks it again anyway). */
const REGISTRATION_LOOKUP_TIMEOUT_MS = 2_000;

/**
 * Registration-time check of a host name (`127.0.0.1.nip.io`, `metadata.google.internal`): if it resolves now
 * and any address is non-public, returns why it is refused (422). A name that does not resolve yet, or not within
 * two seconds, is accepted: the delivery-time check (resolveDeliveryAddress) refuses it if it ever points inside.
 */
export async function webhookHostProblem(
  raw: string,
  allowPrivate: boolean,
  lookup: AddressLookup = systemLookup,
): Promise<string | null> {
  if (allowPrivate) return null;
  const host = new URL(raw).hostname;
  if (host.startsWith('[') || isIP(host) !== 0) return null; // literals were checked by webhookUrlProblem
  let timer: NodeJS.Timeout | undefined;
  const answers = await Promise.race([
    lookup(host).catch(() => [] as { address: string; family: number }[]),
    new Promise<{ address: string; family: number }[]>(
      (resolve) => (timer = setTimeout(() => resolve([]), REGISTRATION_LOOKUP_TIMEOUT_MS)),
    ),
  ]).finally(() => clearTimeout(timer));
  const bad = answers.find((a) => !isPublicAddress(a.address));
  return bad
    ? `must not point to a private, loopback, link-local or reserved address (${host} resolves to ${bad.address})`
    : null;
}
