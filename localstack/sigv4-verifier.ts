/**
 * Checks the SigV4 signature of a request to a function URL with `AuthType: AWS_IAM`, as Lambda
 * does before it invokes the function: the signature is computed again with the AWS SDK's own
 * signer (`@smithy/signature-v4`) from the request as received, for service `lambda`, and must
 * match; the signing time must be within 5 minutes of now. What is refused gets the 403 bodies
 * function URLs answer (`{"Message": "Forbidden"}` without a signature, AWS's texts otherwise).
 */
import { createHash, createHmac, type Hash, type Hmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';

/** The key pair requests must be signed with. */
export interface SigV4Key {
  accessKeyId: string;
  secretAccessKey: string;
}

/** A request as the server received it. */
export interface ReceivedRequest {
  method: string;
  /** The raw request target: path and query exactly as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Why a request is refused: the `Message` of the 403 body. */
export type SigV4Refusal = string;

const SKEW_MS = 5 * 60_000;

function toBytes(data: string | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** SHA-256 (or HMAC-SHA-256 with a secret) in the shape the SDK's signer takes. */
class NodeSha256 {
  #hash: Hash | Hmac;
  readonly #secret: Uint8Array | undefined;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#secret = secret === undefined ? undefined : toBytes(secret);
    this.#hash = this.#fresh();
  }
  #fresh(): Hash | Hmac {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret);
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
  reset(): void {
    this.#hash = this.#fresh();
  }
}

/** `20261126T101500Z` -> epoch ms, or NaN. */
function amzDate(text: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return m === null ? Number.NaN : Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
}

function formatAmzDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

/**
 * Undefined when `request` carries a valid signature of `key` for `lambda` in `region`, made
 * within 5 minutes of `nowMs`; otherwise the message Lambda answers with (HTTP 403).
 */
export async function verifySigV4(
  request: ReceivedRequest,
  key: SigV4Key,
  region: string,
  nowMs: number = Date.now(),
): Promise<SigV4Refusal | undefined> {
  const authorization = header(request.headers, 'authorization') ?? '';
  const match =
    /^AWS4-HMAC-SHA256\s+Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})\s*$/.exec(
      authorization,
    );
  if (match === null) return 'Forbidden';
  const [, accessKeyId, day, signedRegion, service, signedHeaderList, signature] =
    match as unknown as string[];
  if (accessKeyId !== key.accessKeyId) return 'The security token included in the request is invalid.';
  if (service !== 'lambda') return `Credential should be scoped to correct service: 'lambda'.`;
  if (signedRegion !== region) {
    return `Credential should be scoped to a valid region. (region '${signedRegion}', expected '${region}')`;
  }
  const dateText = header(request.headers, 'x-amz-date') ?? '';
  const signedAt = amzDate(dateText);
  if (Number.isNaN(signedAt) || !dateText.startsWith(day ?? '')) return MISMATCH;
  if (signedAt < nowMs - SKEW_MS) {
    return `Signature expired: ${dateText} is now earlier than ${formatAmzDate(nowMs - SKEW_MS)} (${formatAmzDate(nowMs)} - 5 min.)`;
  }
  if (signedAt > nowMs + SKEW_MS) {
    return `Signature not yet current: ${dateText} is still later than ${formatAmzDate(nowMs + SKEW_MS)} (${formatAmzDate(nowMs)} + 5 min.)`;
  }
  const signed = (signedHeaderList ?? '').split(';');
  if (!signed.includes('host')) {
    return "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.";
  }
  // A declared payload hash must be the body's: an unsigned or forged body is not accepted.
  const declared = header(request.headers, 'x-amz-content-sha256');
  if (declared !== undefined && declared !== createHash('sha256').update(request.body).digest('hex'))
    return MISMATCH;

  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = header(request.headers, name);
    if (value === undefined) return MISMATCH;
    headers[name] = value;
  }
  const queryAt = request.url.indexOf('?');
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(queryAt === -1 ? '' : request.url.slice(queryAt + 1))) {
    const known = query[name];
    query[name] = known === undefined ? value : [...[known].flat(), value];
  }
  const signer = new SignatureV4({
    service: 'lambda',
    region,
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
    sha256: NodeSha256,
    // Only what the client signed: no checksum header of our own.
    applyChecksum: signed.includes('x-amz-content-sha256'),
  });
  const resigned = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: (headers.host ?? '').split(':')[0] ?? '',
      path: queryAt === -1 ? request.url : request.url.slice(0, queryAt),
      query,
      headers,
      body: request.body.length === 0 ? undefined : request.body,
    },
    { signingDate: new Date(signedAt), signableHeaders: new Set(signed) },
  );
  const expected = /Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization))?.[1] ?? '';
  const given = Buffer.from(signature ?? '');
  return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected))
    ? undefined
    : MISMATCH;
}
