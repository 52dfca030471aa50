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
  [cidr('168.63.129.16/32'), 'metadata'], // Azure WireServer (VM agent, extensions' settings)
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

/**
 * The names `allowPrivate` (`--allow-private`) takes, and the address classes each allows.
 * `private` is the RFC 1918 ranges and their IPv6 counterpart (unique-local, fc00::/7).
 */
export const NETWORK_NAMES: Readonly<Record<string, readonly AddressClass[]>> = {
  loopback: ['loopback'],
  private: ['private', 'unique-local'],
  'unique-local': ['unique-local'],
  'link-local': ['link-local'],
  cgnat: ['cgnat'],
  metadata: ['metadata'],
  unspecified: ['unspecified'],
  documentation: ['documentation'],
  benchmarking: ['benchmarking'],
  reserved: ['reserved'],
};

/**
 * What `allowPrivate: true` (a bare `--allow-private`) allows: the machine itself and the networks
 * behind it (RFC 1918, unique-local, carrier-grade NAT as Tailscale uses). Never the cloud
 * metadata addresses: they hand out credentials, and a page or sitemap of an allowed site could
 * name one. Those, link-local and the rest are allowed only when named.
 */
export const DEFAULT_PRIVATE_NETWORKS: readonly string[] = ['loopback', 'private', 'cgnat'];

/** Non-public addresses the SSRF guard lets through: classes by name, and CIDR ranges. */
export interface AddressAllowance {
  classes: ReadonlySet<AddressClass>;
  ranges: readonly Cidr[];
}

const DOTTED_V4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** A CIDR range or a single address (as a /32 or /128), or undefined when the text is neither. */
function parseRange(text: string): Cidr | undefined {
  const [address = '', prefix, ...rest] = text.split('/');
  if (rest.length > 0 || !(DOTTED_V4.test(address) || address.includes(':'))) return undefined;
  if (!ipaddr.isValid(address)) return undefined;
  const parsed = ipaddr.parse(address);
  const bits = parsed.kind() === 'ipv4' ? 32 : 128;
  if (prefix === undefined) return [parsed, bits];
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits) return undefined;
  return [parsed, Number(prefix)];
}

/** Problems with a list of networks (names or CIDR ranges), or an empty list when it is good. */
export function networkProblems(networks: readonly string[]): string[] {
  if (networks.length === 0) {
    return [`give at least one network: a name (${Object.keys(NETWORK_NAMES).join(', ')}) or a CIDR range`];
  }
  return networks.flatMap((network) =>
    NETWORK_NAMES[network] !== undefined || parseRange(network) !== undefined
      ? []
      : [
          `"${network}" is neither a network name (${Object.keys(NETWORK_NAMES).join(', ')}) ` +
            'nor an address or CIDR range such as 10.1.0.0/16 or fd00::/8',
        ],
  );
}

/** `allowPrivate` as written (a list or "a,b,c") as its list of networks, each trimmed. */
export function networkList(value: string | readonly string[]): string[] {
  const items = typeof value === 'string' ? value.split(',') : value.flatMap((item) => item.split(','));
  return items.map((item) => item.trim()).filter((item) => item.length > 0);
}

/**
 * What `allowPrivate` lets through: nothing non-public (`false`), {@link DEFAULT_PRIVATE_NETWORKS}
 * (`true`), or the named networks and ranges. Unknown entries are ignored (the config schema
 * refuses them before a crawl starts).
 */
export function addressAllowance(allowPrivate: boolean | readonly string[]): AddressAllowance | undefined {
  if (allowPrivate === false) return undefined;
  const networks = allowPrivate === true ? DEFAULT_PRIVATE_NETWORKS : allowPrivate;
  const classes = new Set<AddressClass>();
  const ranges: Cidr[] = [];
  for (const network of networks) {
    const named = NETWORK_NAMES[network];
    if (named !== undefined) for (const cls of named) classes.add(cls);
    else {
      const range = parseRange(network);
      if (range !== undefined) ranges.push(range);
    }
  }
  return { classes, ranges };
}

/**
 * Whether the SSRF guard connects to `ip`, and the address's class: public addresses always; a
 * non-public one when `allowance` names its class or a range holding it. A metadata address
 * only when `metadata` is named or the range is that one address: a range such as
 * 169.254.0.0/16 does not open the credentials endpoint inside it.
 */
export function checkAddress(
  ip: string,
  allowance: AddressAllowance | undefined,
): { allowed: boolean; addressClass: AddressClass } {
  const addressClass = classifyAddress(ip);
  if (addressClass === 'public') return { allowed: true, addressClass };
  if (allowance === undefined || addressClass === 'invalid') return { allowed: false, addressClass };
  if (allowance.classes.has(addressClass)) return { allowed: true, addressClass };
  if (V4_COMPATIBLE_TEXT.test(ip.trim())) return { allowed: false, addressClass };
  let address = ipaddr.parse(
    ip
      .trim()
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/%.*$/, ''),
  );
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  const allowed = allowance.ranges.some(
    ([base, bits]) =>
      base.kind() === address.kind() &&
      address.match([base, bits] as Cidr) &&
      (addressClass !== 'metadata' || bits === (base.kind() === 'ipv4' ? 32 : 128)),
  );
  return { allowed, addressClass };
}
