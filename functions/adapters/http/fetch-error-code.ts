/**
 * Maps what undici, node:net, node:dns and node:tls throw to the Fetcher port's stable codes.
 */
import type { FetchErrorCode } from '../../core/ports.ts';
import { BlockedAddressError } from './address-guard.ts';

const DNS_CODES = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EAI_NODATA',
  'ENODATA',
  'ESERVFAIL',
  'ENONAME',
  'ETIMEOUT', // c-ares resolver timeout (dns.resolve*), not a TCP timeout
]);

// OpenSSL verification results and Node's TLS errors: "CERT_HAS_EXPIRED", "ERR_TLS_CERT_ALTNAME_INVALID",
// "ERR_SSL_WRONG_VERSION_NUMBER", "DEPTH_ZERO_SELF_SIGNED_CERT", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", ...
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|SELF_SIGNED|UNABLE_TO_|HOSTNAME_MISMATCH|INVALID_CA/;

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** The port's code for an error that ended a fetch before a complete response was received. */
export function fetchErrorCode(error: unknown): FetchErrorCode {
  if (error instanceof BlockedAddressError) return 'blocked-address';
  const code = codeOf(error);
  if (DNS_CODES.has(code)) return 'dns';
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timeout-connect';
    case 'UND_ERR_HEADERS_TIMEOUT':
      return 'timeout-headers';
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timeout-idle';
    case 'UND_ERR_HEADERS_OVERFLOW':
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return 'protocol';
  }
  if (code.startsWith('HPE_') || (error as Error | null)?.name === 'HTTPParserError') return 'protocol';
  if (TLS_CODE.test(code)) return 'tls';
  // ECONNREFUSED, ECONNRESET, EHOSTUNREACH, ENETUNREACH, EPIPE, ETIMEDOUT, UND_ERR_SOCKET (the peer
  // closed before the response was complete), and anything unforeseen: the connection failed.
  return 'connect';
}

// OpenSSL's "C0CC...:error:0A00010B:SSL routines:func:reason:file:line:" keeps only the reason.
const OPENSSL_MESSAGE = /^[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/;

/** A one-line description of the error for `FetchFailure.message`, with its code. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof BlockedAddressError) return error.message;
  const code = codeOf(error);
  let message = (error.message || error.name).trim();
  const openssl = OPENSSL_MESSAGE.exec(message);
  if (openssl?.[1] !== undefined) message = openssl[1];
  message = message.replace(/\s+/g, ' ');
  return code !== '' && !message.includes(code) ? `${message} (${code})` : message;
}
