import { serializeWarcRecord, warcRecordId } from './warc-record.ts';

/** What goes into the warcinfo record that opens every WARC file. */
export interface WarcinfoInput {
  /** UUID from the caller's id generator. */
  uuid: string;
  /** WARC-Date (see `warcDate`). */
  date: string;
  /** WARC-Filename: the file's own name. */
  filename: string;
  /** `crawlstack/<version>`. */
  software: string;
  /** Extra `name: value` lines, such as a summary of the crawl configuration. */
  fields?: Readonly<Record<string, string>>;
}

/** The WARC spec this writer follows, for the `conformsTo` field. */
export const WARC_1_1_SPEC =
  'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/';

/**
 * Serializes a `warcinfo` record (`application/warc-fields`: software, format, conformsTo, then
 * the caller's fields). Returns the record and its WARC-Record-ID, which every later record of the
 * file names in WARC-Warcinfo-ID.
 */
export function warcinfoRecord(input: WarcinfoInput): { record: Buffer; id: string } {
  const id = warcRecordId(input.uuid);
  let block = `software: ${input.software}\r\nformat: WARC File Format 1.1\r\nconformsTo: ${WARC_1_1_SPEC}\r\n`;
  for (const [name, value] of Object.entries(input.fields ?? {})) {
    block += `${name.replace(/[\s:]+/g, '-')}: ${value.replace(/[\r\n]+/g, ' ')}\r\n`;
  }
  const record = serializeWarcRecord(
    [
      ['WARC-Type', 'warcinfo'],
      ['WARC-Record-ID', id],
      ['WARC-Date', input.date],
      ['WARC-Filename', input.filename],
      ['Content-Type', 'application/warc-fields'],
    ],
    [Buffer.from(block, 'utf8')],
  );
  return { record, id };
}
