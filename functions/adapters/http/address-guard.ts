/**
 * The SSRF guard's two hooks into connection set-up: a DNS lookup wrapper that drops non-public
 * answers before a socket is opened, and a connector wrapper that checks the address a socket is
 * actually connected to before undici writes a single byte of the request on it.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { buildConnector } from 'undici';
import { type AddressAllowance, type AddressClass, checkAddress } from '../../core/net/address-policy.ts';

/** Raised (inside the connection set-up) when the guard refuses an address; the fetcher maps it to 'blocked-address'. */
export class BlockedAddressError extends Error {
  readonly code = 'BLOCKED_ADDRESS';
  override readonly name = 'BlockedAddressError';

  constructor(
    readonly address: string,
    readonly addressClass: AddressClass,
    readonly hostname?: string,
  ) {
    const name = hostname?.replace(/^\[(.*)\]$/, '$1');
    const target = name !== undefined && name !== address ? `${name} at ${address}` : address;
    super(
      `refused to connect to ${target} (${addressClass} address): the SSRF guard only connects to ` +
        `public addresses${allowAdvice(addressClass)}`,
    );
  }
}

/** How to let the guard connect to an address of this class. */
function allowAdvice(addressClass: AddressClass): string {
  if (addressClass === 'metadata') {
    return ' and the networks --allow-private names; a cloud metadata address (it hands out credentials) only when "metadata" or the address itself is named';
  }
  if (
    addressClass === 'loopback' ||
    addressClass === 'private' ||
    addressClass === 'unique-local' ||
    addressClass === 'cgnat'
  ) {
    return '; run with --allow-private (allowPrivate: true) to allow it';
  }
  return `; run with --allow-private ${addressClass === 'invalid' ? 'and its network' : addressClass} (allowPrivate: ["${addressClass}"]) to allow it`;
}

/** The callback shape of `dns.lookup` as `net.connect` calls it (it always passes an options object). */
type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `dns.lookup`-compatible function (what `net.connect`'s `lookup` option accepts). */
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * Wraps a lookup so that answers the guard refuses (non-public ones outside `allowance`, see
 * `checkAddress`) never reach `net.connect`. With `all: true` (Node's
 * happy-eyeballs path) the public answers are kept and the rest dropped; when nothing public is
 * left the lookup fails with a `BlockedAddressError`. `net.connect` connects to exactly the
 * address this returns, so there is no second resolution a rebinding DNS server could answer
 * differently.
 */
export function guardLookup(inner: LookupFunction, allowance?: AddressAllowance): LookupFunction {
  return (hostname, options, callback) => {
    inner(hostname, options, (error, address, family) => {
      if (error) {
        callback(error, address, family);
        return;
      }
      if (Array.isArray(address)) {
        const allowed = address.filter((entry) => checkAddress(entry.address, allowance).allowed);
        if (allowed.length > 0) {
          callback(null, allowed);
          return;
        }
        const first = address[0];
        const refused = first === undefined ? '(no address)' : first.address;
        callback(
          new BlockedAddressError(refused, checkAddress(refused, allowance).addressClass, hostname),
          [],
        );
        return;
      }
      const checked = checkAddress(address, allowance);
      if (!checked.allowed) {
        callback(new BlockedAddressError(address, checked.addressClass, hostname), '');
        return;
      }
      callback(null, address, family);
    });
  };
}

/**
 * Wraps an undici connector so every new socket is checked against the address policy once it is
 * connected (after the TLS handshake for https) and before the request is written. This is the
 * authoritative check: it sees the peer address the kernel connected to, whatever produced it (an
 * IP-literal URL, a DNS answer, a rebinding DNS server). Keep-alive cannot bypass it, because undici
 * only ever reuses sockets that came out of this connector, and a socket stays connected to the
 * one peer it was checked against.
 */
export function guardConnector(
  connect: buildConnector.connector,
  allowance?: AddressAllowance,
): buildConnector.connector {
  return (options, callback) => {
    connect(options, (error, socket) => {
      if (error !== null || socket === null) {
        callback(error ?? new Error('connector returned no socket'), null);
        return;
      }
      const address = socket.remoteAddress;
      if (address === undefined) {
        // The peer hung up before its address could be read: nothing to check, nothing to send to.
        socket.destroy();
        const closed: NodeJS.ErrnoException = new Error('socket closed before its peer address was known');
        closed.code = 'ECONNRESET';
        callback(closed, null);
        return;
      }
      const checked = checkAddress(address, allowance);
      if (!checked.allowed) {
        socket.destroy();
        callback(new BlockedAddressError(address, checked.addressClass, options.hostname), null);
        return;
      }
      callback(null, socket);
    });
  };
}
