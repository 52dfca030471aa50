/**
 * Which IP addresses the crawler may connect to. Only globally routable unicast addresses are
 * 'public'; everything else (loopback, private networks, link-local, cloud metadata endpoints,
 * multicast, documentation and reserved space) is blocked, so a page cannot point the crawler at
 * the machine it runs on or at the network behind it (SSRF).
 *
 * Addresses that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, 6to4 `2002:aabb:ccdd::/48`,
 * NAT64 `64:ff9b::a.b.c.d`) are classified by the embedded address: packets to them end up at
 * that IPv4 host, so `::ffff:127.0.0.1` is 'loopback' and `64:ff9b::8.8.8.8` is 'public'. Teredo
 * (`2001::/32`) is blocked outright: its embedded addresses are obfuscated and no web site is
 * served from one.
 */
import ipaddr from 'ipaddr.js';

/** What kind of address an IP is; every class except 'public' is blocked by the SSRF guard. */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'broadcast'
  | 'unique-local'
  | 'documentation'
  | 'benchmarking'
  | 'teredo'
  | 'reserved'
  | 'invalid';

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
type Table = readonly (readonly [Cidr, AddressClass])[];

const cidr = (text: string): Cidr => ipaddr.parseCIDR(text);

// First match wins: the metadata hosts sit inside link-local and CGNAT space and must come first.
const V4_TABLE: Table = [
  [cidr('169.254.169.254/32'), 'metadata'], // AWS, GCP, Azure, OpenStack instance metadata
  [cidr('169.254.170.2/32'), 'metadata'], // ECS task metadata and credentials
  [cidr('169.254.170.23/32'), 'metadata'], // EKS Pod Identity agent
  [cidr('100.100.100.200/32'), 'metadata'], // Alibaba Cloud
  [cidr('192.0.0.192/32'), 'metadata'], // Oracle Cloud
  [cidr('0.0.0.0/8'), 'unspecified'], // "this network": Linux routes 0.0.0.0 to the local host
  [cidr('10.0.0.0/8'), 'private'],
  [cidr('100.64.0.0/10'), 'cgnat'],
  [cidr('127.0.0.0/8'), 'loopback'],
  [cidr('169.254.0.0/16'), 'link-local'],
  [cidr('172.16.0.0/12'), 'private'],
  [cidr('192.0.0.0/24'), 'reserved'], // IETF protocol assignments
  [cidr('192.0.2.0/24'), 'documentation'],
  [cidr('192.88.99.0/24'), 'reserved'], // deprecated 6to4 relay anycast
  [cidr('192.168.0.0/16'), 'private'],
  [cidr('198.18.0.0/15'), 'benchmarking'],
  [cidr('198.51.100.0/24'), 'documentation'],
  [cidr('203.0.113.0/24'), 'documentation'],
  [cidr('224.0.0.0/4'), 'multicast'],
  [cidr('255.255.255.255/32'), 'broadcast'],
  [cidr('240.0.0.0/4'), 'reserved'],
];

const V6_TABLE: Table = [
  [cidr('::/128'), 'unspecified'],
  [cidr('::1/128'), 'loopback'],
  [cidr('::/96'), 'reserved'], // deprecated IPv4-compatible addresses
  [cidr('::ffff:0:0:0/96'), 'reserved'], // IPv4-translated (RFC 6145)
  [cidr('64:ff9b:1::/48'), 'reserved'], // local-use NAT64: the embedded address is site-specific
  [cidr('100::/64'), 'reserved'], // discard-only
  [cidr('2001::/32'), 'teredo'],
  [cidr('2001:2::/48'), 'benchmarking'],
  [cidr('2001::/23'), 'reserved'], // IETF protocol assignments (ORCHID, AMT, ...)
  [cidr('2001:db8::/32'), 'documentation'],
  [cidr('3fff::/20'), 'documentation'],
  [cidr('fd00:ec2::254/128'), 'metadata'], // AWS instance metadata over IPv6
  [cidr('fc00::/7'), 'unique-local'],
  [cidr('fe80::/10'), 'link-local'],
  [cidr('ff00::/8'), 'multicast'],
];

const GLOBAL_UNICAST_V6 = cidr('2000::/3');
const NAT64 = cidr('64:ff9b::/96');
const SIX_TO_FOUR = cidr('2002::/16');
// ipaddr.js reads the deprecated `::a.b.c.d` form as IPv4-mapped; it is not, so catch it first.
const V4_COMPATIBLE_TEXT = /^::\d+\.\d+\.\d+\.\d+$/;

function lookup(address: ipaddr.IPv4 | ipaddr.IPv6, table: Table): AddressClass | undefined {
  for (const [range, cls] of table) {
    if (address.kind() === range[0].kind() && address.match(range)) return cls;
  }
  return undefined;
}

function classifyV4(address: ipaddr.IPv4): AddressClass {
  return lookup(address, V4_TABLE) ?? 'public';
}

function embeddedV4(parts: readonly number[], high: number, low: number): ipaddr.IPv4 {
  const a = parts[high] ?? 0;
  const b = parts[low] ?? 0;
  return new ipaddr.IPv4([a >> 8, a & 0xff, b >> 8, b & 0xff]);
}

function classifyV6(address: ipaddr.IPv6): AddressClass {
  if (address.isIPv4MappedAddress()) return classifyV4(address.toIPv4Address());
  if (address.match(NAT64)) return classifyV4(embeddedV4(address.parts, 6, 7));
  if (address.match(SIX_TO_FOUR)) return classifyV4(embeddedV4(address.parts, 1, 2));
  const listed = lookup(address, V6_TABLE);
  if (listed !== undefined) return listed;
  // Only 2000::/3 is allocated for global unicast; the rest of the space is unassigned or special.
  return address.match(GLOBAL_UNICAST_V6) ? 'public' : 'reserved';
}

/**
 * Classifies an IP address given as text (dotted IPv4, or IPv6 with or without brackets and a
 * zone id). Text that is not an IP address is 'invalid'.
 */
export function classifyAddress(ip: string): AddressClass {
  let text = ip.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (V4_COMPATIBLE_TEXT.test(text)) return 'reserved';
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(text);
  } catch {
    return 'invalid';
  }
  return address.kind() === 'ipv4' ? classifyV4(address as ipaddr.IPv4) : classifyV6(address as ipaddr.IPv6);
}

/** `true` for every address the SSRF guard refuses: anything not 'public' (invalid text included). */
export function isBlockedAddress(ip: string): boolean {
  return classifyAddress(ip) !== 'public';
}
