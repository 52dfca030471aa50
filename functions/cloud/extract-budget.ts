/**
 * How a crawl's `extract` fields fit in a capture message: the page record (with its extracted
 * values) travels to the archiver in one SQS message (at most 256 KiB; the worker keeps bodies
 * under CAPTURE_MESSAGE_LIMIT, 200,000 bytes, by storing the WARC records apart when they do not
 * fit, but the record itself must). So the cloud caps the characters extracted per page.
 */
import type { CrawlConfig } from '../core/config.ts';

/**
 * `maxExtractChars` in the cloud at most: 20,000 characters are at most 120,000 bytes of JSON
 * (a control character is 6 bytes escaped, `\u001f`), which leaves the rest of the record room in
 * a 200,000-byte message. Values beyond it are cut and counted (`dropped.extractChars`).
 */
export const CLOUD_EXTRACT_CHARS = 20_000;

/** The crawl's settings with its extract caps fitted to a capture message. */
export function cloudExtractSettings(config: CrawlConfig): CrawlConfig {
  if (config.maxExtractChars <= CLOUD_EXTRACT_CHARS) return config;
  return { ...config, maxExtractChars: CLOUD_EXTRACT_CHARS };
}
