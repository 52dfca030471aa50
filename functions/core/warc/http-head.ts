import type { Capture, HeaderList } from '../ports.ts';

// The fetcher hands over the headers as received as Latin-1 strings (one character per byte), so
// Latin-1 encoding writes back the exact bytes that crossed the wire. Characters beyond Latin-1
// can only come from text decoded on the way (undici decodes the reason phrase as UTF-8) or built
// by a caller: such a line is written as UTF-8. Line by line, so one such line leaves the others'
// bytes alone.
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;

function encodeLines(lines: string[]): Buffer {
  return Buffer.concat(lines.map((line) => Buffer.from(line, BEYOND_LATIN1.test(line) ? 'utf8' : 'latin1')));
}

function httpVersion(version: string): string {
  if (version.startsWith('HTTP/')) return version;
  return `HTTP/${version || '1.1'}`;
}

/**
 * The response headers as stored in the WARC response record, which holds the DECODED body (the
 * fetcher removed any Content-Encoding and de-chunked the transfer). For the record to describe
 * its own bytes, `Content-Encoding` and `Transfer-Encoding` are dropped (their values kept as
 * `X-Crawlstack-Original-Content-Encoding` / `X-Crawlstack-Original-Transfer-Encoding`) and
 * `Content-Length` is set to the stored body length (a different original value is kept as
 * `X-Crawlstack-Original-Content-Length`). Other headers keep their order, names and repeats.
 */
export function storedResponseHeaders(headers: HeaderList, bodyLength: number): HeaderList {
  const out: HeaderList = [];
  const length = String(bodyLength);
  let lengthWritten = false;
  for (const header of headers) {
    const name = header[0].toLowerCase();
    if (name === 'content-encoding') {
      out.push(['X-Crawlstack-Original-Content-Encoding', header[1]]);
    } else if (name === 'transfer-encoding') {
      out.push(['X-Crawlstack-Original-Transfer-Encoding', header[1]]);
    } else if (name === 'content-length') {
      if (header[1].trim() !== length) out.push(['X-Crawlstack-Original-Content-Length', header[1]]);
      if (!lengthWritten) {
        out.push([header[0], length]);
        lengthWritten = true;
      }
    } else {
      out.push([header[0], header[1]]);
    }
  }
  if (!lengthWritten) out.push(['Content-Length', length]);
  return out;
}

/**
 * The HTTP request as sent, for a WARC request record: `GET <target> HTTP/1.1`, the headers sent,
 * and the blank line (GET has no body). A `Host` header is added from the URL when the fetcher's
 * list lacks one (HTTP/1.1 clients always send it).
 */
export function httpRequestHead(capture: Capture): Buffer {
  const { method, target, headers } = capture.request;
  const lines = [`${method} ${target} ${httpVersion(capture.request.httpVersion)}\r\n`];
  let hasHost = false;
  for (const [name, value] of headers) {
    if (!hasHost && name.toLowerCase() === 'host') hasHost = true;
    lines.push(`${name}: ${value}\r\n`);
  }
  if (!hasHost) lines.splice(1, 0, `Host: ${new URL(capture.url).host}\r\n`);
  lines.push('\r\n');
  return encodeLines(lines);
}

/**
 * The status line and stored headers of a response (see `storedResponseHeaders`), ending with the
 * blank line; the body follows it unchanged. The headers are the ones as received when the capture
 * has them (`rawHeaders`: original name case, obs-text bytes, order and repeats), else the
 * normalized list. The reason phrase may be empty (`HTTP/1.1 200 `), as RFC 9112 allows.
 */
export function httpResponseHead(response: Capture['response']): Buffer {
  const lines = [`${httpVersion(response.httpVersion)} ${response.status} ${response.statusText}\r\n`];
  const headers = response.rawHeaders ?? response.headers;
  for (const [name, value] of storedResponseHeaders(headers, response.body.length)) {
    lines.push(`${name}: ${value}\r\n`);
  }
  lines.push('\r\n');
  return encodeLines(lines);
}
