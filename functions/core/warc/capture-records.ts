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

  const revisit = capture.revisit;
  if (revisit !== undefined) {
    const digest =
      revisit.profile === 'identical-payload-digest' ? sha1Base32(response.body) : revisit.payloadDigest;
    const fields: WarcField[] = [
      ['WARC-Type', 'revisit'],
      ['WARC-Record-ID', responseId],
      ...common,
      ['WARC-Profile', REVISIT_PROFILES[revisit.profile]],
      ['WARC-Refers-To-Target-URI', revisit.refersToTargetUri],
      ['WARC-Refers-To-Date', warcDate(revisit.refersToDate)],
    ];
    if (digest !== undefined) fields.push(['WARC-Payload-Digest', digest]);
    // The block is the HTTP head alone (WARC 1.1 §6.7.2: the payload is left out).
    fields.push(['Content-Type', 'application/http;msgtype=response']);
    return {
      request,
      response: serializeWarcRecord(fields, [httpResponseHead(response)]),
      responseId,
      date,
      payloadDigest: digest ?? '-',
      mime: REVISIT_MIME,
    };
  }

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

/** WARC 1.1 §6.7.2 profile URIs of revisit records. */
export const REVISIT_PROFILES = {
  'server-not-modified': 'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
  'identical-payload-digest': 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
} as const;

/** The media type pywb and `warcio cdx-index` give a revisit record's index line. */
export const REVISIT_MIME = 'warc/revisit';

function mediaType(headers: Capture['response']['headers']): string | undefined {
  for (const [name, value] of headers) {
    if (name.toLowerCase() === 'content-type') {
      const type = value.split(';', 1)[0]!.trim();
      return type || undefined;
    }
  }
  return undefined;
}
