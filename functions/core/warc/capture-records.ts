import type { Capture } from '../ports.ts';
import { httpRequestHead, httpResponseHead } from './http-head.ts';
import { sha1Base32 } from './sha1-base32.ts';
import { warcDate } from './warc-date.ts';
import { serializeWarcRecord, type WarcField, warcRecordId } from './warc-record.ts';

/** Ids for the two records of one capture; each UUID comes from the caller's id generator. */
export interface CaptureRecordIds {
  requestUuid: string;
  responseUuid: string;
  /** WARC-Record-ID (`<urn:uuid:...>`) of the warcinfo record that opens the file. */
  warcinfoId?: string;
}

/** The uncompressed request and response records of one capture, plus what an index needs. */
export interface CaptureRecords {
  request: Buffer;
  response: Buffer;
  /** WARC-Record-ID of the response record. */
  responseId: string;
  /** WARC-Date of both records. */
  date: string;
  /** WARC-Payload-Digest of the response (`sha1:<BASE32>` of the stored body). */
  payloadDigest: string;
  /** Media type of the response (Content-Type without parameters, as pywb and warcio index it), if any. */
  mime: string | undefined;
}

/**
 * Serializes a capture as a WARC `request` record (the request as sent, WARC-Concurrent-To the
 * response) and a `response` record (status line, stored headers, decoded body; see
 * `storedResponseHeaders`), both `application/http` with block digests, the response with a
 * payload digest and WARC-Truncated when the body was cut.
 */
export function captureToWarcRecords(capture: Capture, ids: CaptureRecordIds): CaptureRecords {
  const date = warcDate(capture.fetchedAt);
  const requestId = warcRecordId(ids.requestUuid);
  const responseId = warcRecordId(ids.responseUuid);
  const { response } = capture;

  const common: WarcField[] = [
    ['WARC-Date', date],
    ['WARC-Target-URI', capture.url],
  ];
  if (capture.remoteAddress) common.push(['WARC-IP-Address', capture.remoteAddress]);
  if (ids.warcinfoId) common.push(['WARC-Warcinfo-ID', ids.warcinfoId]);

  const request = serializeWarcRecord(
    [
      ['WARC-Type', 'request'],
      ['WARC-Record-ID', requestId],
      ...common,
      ['WARC-Concurrent-To', responseId],
      ['Content-Type', 'application/http;msgtype=request'],
    ],
    [httpRequestHead(capture)],
  );

  const payloadDigest = sha1Base32(response.body);
  const responseFields: WarcField[] = [
    ['WARC-Type', 'response'],
    ['WARC-Record-ID', responseId],
    ...common,
    ['WARC-Payload-Digest', payloadDigest],
  ];
  if (response.truncated) responseFields.push(['WARC-Truncated', response.truncated]);
  responseFields.push(['Content-Type', 'application/http;msgtype=response']);
  const responseRecord = serializeWarcRecord(responseFields, [httpResponseHead(response), response.body]);

  return {
    request,
    response: responseRecord,
    responseId,
    date,
    payloadDigest,
    mime: mediaType(response.headers),
  };
}

function mediaType(headers: Capture['response']['headers']): string | undefined {
  for (const [name, value] of headers) {
    if (name.toLowerCase() === 'content-type') {
      const type = value.split(';', 1)[0]!.trim();
      return type || undefined;
    }
  }
  return undefined;
}
