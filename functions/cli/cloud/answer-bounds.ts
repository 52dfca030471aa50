/**
 * Bounds on what the API and the storage may send the CLI, so a broken or hostile answer ends
 * the command with a message instead of filling the memory, the disk or the time:
 *
 *   JSON answer    at most {@link MAX_JSON_ANSWER_BYTES}, read as it streams (refused past it,
 *                  never buffered whole); error bodies: their first {@link ERROR_BODY_BYTES}
 *   listings       a cursor or `Link: rel=next` seen before is a loop; at most
 *                  {@link MAX_LISTING_PAGES} pages of one listing
 *   silence        {@link Watchdog}: no headers, or no body byte, for so long aborts the request
 */
import { CloudCliError } from './cloud-cli-error.ts';

/** The most bytes of one JSON answer of the API (a page of 1000 page records is about 1 MB). */
export const MAX_JSON_ANSWER_BYTES = 32 * 1024 * 1024;
/** The bytes of an error answer read for its message. */
export const ERROR_BODY_BYTES = 64 * 1024;
/** The most pages one listing may take (100 objects a page: ten million objects). */
export const MAX_LISTING_PAGES = 100_000;

/**
 * The body of `response` as text, read chunk by chunk: refused (a `BAD_ANSWER` error naming
 * `what`) when its Content-Length or the bytes that arrive pass `max`; with `truncate`, the
 * first `max` bytes instead.
 */
export async function readAnswerText(
  response: Response,
  what: string,
  { max = MAX_JSON_ANSWER_BYTES, truncate = false }: { max?: number; truncate?: boolean } = {},
): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (!truncate && declared > max) {
    await response.body?.cancel();
    throw tooLarge(what, max, `${declared} bytes announced`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > max) {
      await reader.cancel();
      if (!truncate) throw tooLarge(what, max, 'more arrived');
      chunks.push(value.subarray(0, max - size));
      size = max;
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function tooLarge(what: string, max: number, detail: string): CloudCliError {
  return new CloudCliError(
    'BAD_ANSWER',
    `the answer to ${what} is over ${Math.round(max / 1024 / 1024)} MiB (${detail}): refused, not read`,
  );
}

/**
 * The pages of one listing, walked by the cursor (or next link) each answer hands out: a cursor
 * handed out before would list the same pages again without end, and so would a listing past
 * `maxPages`: both end the walk with a `BAD_ANSWER` error.
 */
export class PageWalk {
  readonly #what: string;
  readonly #maxPages: number;
  readonly #seen = new Set<string>();

  constructor(what: string, maxPages = MAX_LISTING_PAGES) {
    this.#what = what;
    this.#maxPages = maxPages;
  }

  /** Takes the cursor an answer handed out (undefined: the last page); returns it. */
  next(cursor: string | undefined): string | undefined {
    if (cursor === undefined) return undefined;
    if (this.#seen.has(cursor)) {
      throw new CloudCliError(
        'BAD_ANSWER',
        `${this.#what}: the API handed out the cursor ${JSON.stringify(cursor.slice(0, 200))} twice, which would list the same pages without end: stopped`,
      );
    }
    if (this.#seen.size + 1 >= this.#maxPages) {
      throw new CloudCliError(
        'BAD_ANSWER',
        `${this.#what}: more than ${this.#maxPages} pages, the most one listing may take: stopped`,
      );
    }
    this.#seen.add(cursor);
    return cursor;
  }
}

/**
 * Aborts `controller` when it is not kicked for `ms`: the time to the answer's headers (connect
 * included), then the time between two chunks of its body. `fired` says whether it did.
 */
export class Watchdog {
  readonly #controller: AbortController;
  #timer: ReturnType<typeof setTimeout> | undefined;
  fired = false;

  constructor(controller: AbortController, ms: number) {
    this.#controller = controller;
    this.kick(ms);
  }

  /** Starts the wait again, `ms` from now. */
  kick(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.fired = true;
      this.#controller.abort(new Error(`no answer for ${ms} ms`));
    }, ms);
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}
