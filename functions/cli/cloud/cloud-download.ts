/**
 * `crawlstack cloud download <id> --out DIR`: a cloud crawl's archive, through the API only (its
 * listings hand out presigned S3 URLs), into the layout of a local crawl's output folder, so
 * `crawlstack rank`, `export`, `cache-study` and `ui` read it:
 *
 *   warc/<stamp>-<hash>.warc.gz   the crawl's WARC objects, as stored
 *   warc/index.cdxj               one line per response record (read from the records themselves)
 *   pages.jsonl                   the index's page records as local page records (a URL once)
 *   links.jsonl                   the link graph (a page once)
 *   url-seen.trace                the URL-seen trace objects, in order (when the cloud recorded one)
 *   dataset.jsonl                 GET /crawls/{id}/dataset, page after page (a crawl with extract
 *                                 fields, when the API has the endpoint)
 *   rules.json                    GET /crawls/{id}/rules: the duplicate-URL rules learned per host,
 *                                 as a local crawl writes them (canonicalize --rules reads it)
 *   summary.json                  the summary of the crawl's status when downloaded
 *   cloud/                        the index, links and trace objects as stored (what the files
 *                                 above are rebuilt from), and cloud.json (which crawl this is)
 *
 * Resumable: an object already here with its listed size is not fetched again, and each file is
 * written to `.part` and renamed when whole. Memory stays flat: objects are streamed to disk, the
 * files above are rebuilt line by line, repeated URLs are found with 64-bit fingerprints.
 *
 * Bounded against a broken or hostile API (each a `BAD_ANSWER` or `TIMEOUT` error, exit 2):
 * every file is written inside --out (a listed key must be under its prefix and end in a plain
 * file name; the folders must not lead elsewhere; files are opened with O_NOFOLLOW), a body is
 * cut at its listed size, silence ends a fetch ({@link DownloadLimits}), a listing or dataset
 * that hands out a cursor or next link twice is a loop, and JSON answers are read with a bound
 * (answer-bounds.ts).
 */
import { once } from 'node:events';
import {
  closeSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  type WriteStream,
  writeSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { PageItem } from '../../cloud/messages/crawl-records.ts';
import type { CrawlProgressView } from '../../cloud/use-cases/crawl-progress.ts';
import { type ArchiveKind, archivePrefix } from '../../cloud/use-cases/list-archive.ts';
import { safeJson } from '../../core/text/safe-text.ts';
import type { LinkRecord } from '../../core/types.ts';
import { fingerprint } from '../../core/url/fingerprint.ts';
import { FingerprintSet } from '../../core/url-seen/fingerprint-set.ts';
import { cdxjLine } from '../../core/warc/cdxj.ts';
import { UsageError } from '../cli-options.ts';
import { formatBytes } from '../progress.ts';
import { ERROR_BODY_BYTES, PageWalk, readAnswerText, Watchdog } from './answer-bounds.ts';
import { apiError, type CloudApi, networkCode } from './cloud-api.ts';
import { CloudCliError } from './cloud-cli-error.ts';
import { pageRecordOfItem, summaryOfView } from './cloud-views.ts';
import { responseEntry } from './warc-response-head.ts';

/** What one download run did. */
export interface DownloadReport {
  status: CrawlProgressView['status'];
  /** Per kind: objects listed, fetched now, already here, bytes fetched now. */
  objects: Record<ArchiveKind, { listed: number; fetched: number; present: number; bytes: number }>;
  pages: number;
  /** Index lines of a URL already listed (a capture archived twice after a crash). */
  repeatedPages: number;
  /** Pages whose WARC object is not in the archive (any more): written without `warc`. */
  missingWarc: number;
  links: number;
  trace: boolean;
  dataset: 'written' | 'not-asked' | 'no-endpoint';
  /** Duplicate-URL rules written to rules.json (undefined: the API has no rules endpoint). */
  rules: number | undefined;
  /** Things the user should know (what was not written, and why). */
  notes: string[];
}

/** One listed object. */
interface Listed {
  key: string;
  size: number;
  url: string;
}

/** A page of `GET /crawls/{id}/objects`. */
interface ObjectPage {
  objects: Listed[];
  cursor?: string;
}

/** How long a fetch of an archive object may wait (the tests make them short). */
export interface DownloadLimits {
  /** From the request to the answer's headers, connecting included. */
  headersTimeoutMs: number;
  /** Between two chunks of the body. */
  idleTimeoutMs: number;
}

export const DEFAULT_LIMITS: DownloadLimits = { headersTimeoutMs: 30_000, idleTimeoutMs: 60_000 };

/** Index first: every WARC object an index line points at was written before the index. */
const ORDER: readonly ArchiveKind[] = ['index', 'warc', 'links', 'trace'];
const PAGE_SIZE = 100;
const PARALLEL = 4;
const MARKER = 'cloud.json';

/** Downloads crawl `crawlId` into `outDir`. */
export async function downloadCrawl(options: {
  api: CloudApi;
  crawlId: string;
  outDir: string;
  log: (line: string) => void;
  now?: () => number;
  limits?: Partial<DownloadLimits>;
}): Promise<DownloadReport> {
  const { api, crawlId, outDir, log } = options;
  const now = options.now ?? Date.now;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const view = await api.get<CrawlProgressView>(`/crawls/${crawlId}`, { crawlId });
  prepareFolder(outDir, crawlId, api.target.api);
  const report: DownloadReport = {
    status: view.status,
    objects: {
      index: { listed: 0, fetched: 0, present: 0, bytes: 0 },
      warc: { listed: 0, fetched: 0, present: 0, bytes: 0 },
      links: { listed: 0, fetched: 0, present: 0, bytes: 0 },
      trace: { listed: 0, fetched: 0, present: 0, bytes: 0 },
    },
    pages: 0,
    repeatedPages: 0,
    missingWarc: 0,
    links: 0,
    trace: false,
    dataset: 'not-asked',
    rules: undefined,
    notes: [],
  };
  if (view.status === 'running') {
    report.notes.push(
      'the crawl is still running: this is what is archived so far (pages arrive up to a minute after their fetch); run the same command again once it is done for the rest',
    );
  }
  const files: Record<ArchiveKind, string[]> = { index: [], warc: [], links: [], trace: [] };
  for (const kind of ORDER) {
    files[kind] = await fetchKind(api, crawlId, kind, outDir, report.objects[kind], log, limits);
  }
  const warcNames = new Set(files.warc.map((path) => basename(path)));
  await writePages(outDir, files.index, warcNames, report);
  await writeLinks(outDir, files.links, report);
  if (files.trace.length > 0) {
    await concatenate(files.trace, join(outDir, 'url-seen.trace'));
    report.trace = true;
  } else {
    report.notes.push(
      `the cloud recorded no URL-seen trace for this crawl (${archivePrefix('trace', crawlId)} is empty): no url-seen.trace, so cache-study has nothing to replay`,
    );
  }
  if (Object.keys(view.config.extract ?? {}).length > 0) {
    report.dataset = await fetchDataset(api, crawlId, outDir);
    if (report.dataset === 'no-endpoint') {
      report.notes.push(
        `the API has no dataset (GET /crawls/${crawlId}/dataset answered 404: a deployment from before datasets): no dataset.jsonl`,
      );
    }
  }
  report.rules = await fetchRules(api, crawlId, outDir);
  if (report.rules === undefined) {
    report.notes.push(
      `the API has no duplicate-URL rules (GET /crawls/${crawlId}/rules answered 404: a deployment from before them): no rules.json`,
    );
  }
  if (report.missingWarc > 0) {
    report.notes.push(
      `${report.missingWarc} pages point at WARC objects that are not in the archive (expired by the bucket's retention?): written without a warc location`,
    );
  }
  const summary = summaryOfView(view, now(), outDir);
  await writeWhole(join(outDir, 'summary.json'), `${safeJson(summary, 2)}\n`);
  return report;
}

/** Creates the folder; refuses one that holds a local crawl or another crawl's download. */
function prepareFolder(outDir: string, crawlId: string, apiUrl: string): void {
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) {
    throw new UsageError(`--out ${outDir} is a file, not a folder`);
  }
  if (existsSync(join(outDir, 'state.sqlite'))) {
    throw new UsageError(`--out ${outDir} holds a local crawl (state.sqlite): download into another folder`);
  }
  const marker = join(outDir, 'cloud', MARKER);
  if (existsSync(marker)) {
    const held = (JSON.parse(readFileSync(marker, 'utf8')) as { crawlId?: string }).crawlId;
    if (held !== crawlId) {
      throw new UsageError(
        `--out ${outDir} holds the download of crawl ${held}, not ${crawlId}: download into another folder`,
      );
    }
  }
  mkdirSync(outDir, { recursive: true });
  const root = realpathSync(outDir);
  for (const dir of ['cloud', 'warc', 'cloud/index', 'cloud/links', 'cloud/trace']) {
    mkdirSync(join(outDir, dir), { recursive: true });
    // A folder planted as a symbolic link would take the files elsewhere.
    if (realpathSync(join(outDir, dir)) !== join(root, dir)) {
      throw new UsageError(`--out ${outDir}: ${dir} leads outside the folder (a symbolic link): remove it`);
    }
  }
  writeWholeSync(marker, `${JSON.stringify({ crawlId, api: apiUrl }, null, 2)}\n`);
}

/** A file name the download writes: letters, digits, . _ - = + (not first), at most 200. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._=+-]{0,199}$/;

/**
 * Where an object of `kind` goes: a plain file name in its folder of --out, or a `BAD_ANSWER`
 * error for a key outside the listing's prefix or a name that is not plain (`..`, empty, a
 * control character), which could write elsewhere.
 */
export function localPath(outDir: string, kind: ArchiveKind, prefix: string, key: string): string {
  const rest = key.startsWith(prefix) ? key.slice(prefix.length) : undefined;
  const name =
    rest === undefined ? undefined : kind === 'warc' ? rest.split('/').at(-1)! : rest.replaceAll('/', '_');
  if (name === undefined || !SAFE_NAME.test(name)) {
    throw new CloudCliError(
      'BAD_ANSWER',
      `the API listed the object ${safeJson(key.slice(0, 300))}, whose name would not be a plain file in ${outDir} ` +
        `(keys of ${kind} objects are ${prefix}<name>): nothing was written for it; stopped`,
    );
  }
  return kind === 'warc' ? join(outDir, 'warc', name) : join(outDir, 'cloud', kind, name);
}

/** Write, new or emptied, and never through a symbolic link (a link planted at the name fails: ELOOP). */
const WRITE_NO_FOLLOW = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;

/** Opens `path` for writing with {@link WRITE_NO_FOLLOW}. */
function openNoFollow(path: string): WriteStream {
  return createWriteStream(path, { fd: openFileNoFollow(path) });
}

function openFileNoFollow(path: string): number {
  try {
    return openSync(path, WRITE_NO_FOLLOW, 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOOP') throw error;
    throw new UsageError(`${path} is a symbolic link: a download writes through none; remove it`);
  }
}

/** Writes `text` to `path` through `path.part` (not following a link there), renamed when whole. */
async function writeWhole(path: string, text: string): Promise<void> {
  const out = openNoFollow(`${path}.part`);
  await write(out, text);
  await close(out);
  renameSync(`${path}.part`, path);
}

function writeWholeSync(path: string, text: string): void {
  const fd = openSync(
    `${path}.part`,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
  );
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  renameSync(`${path}.part`, path);
}

/** Whether `path` is a file (not a link) of `size` bytes. */
function presentWithSize(path: string, size: number): boolean {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  return stat?.isFile() === true && stat.size === size;
}

/** A page of a listing, checked: objects with a key, a size and an http(s) URL. */
function checkedPage(json: unknown, what: string): ObjectPage {
  const page = json as Partial<ObjectPage> | undefined;
  const ok =
    page !== undefined &&
    page !== null &&
    Array.isArray(page.objects) &&
    page.objects.length <= PAGE_SIZE &&
    page.objects.every(
      (o) =>
        typeof o?.key === 'string' &&
        Number.isSafeInteger(o.size) &&
        o.size >= 0 &&
        typeof o.url === 'string' &&
        /^https?:\/\//.test(o.url),
    ) &&
    (page.cursor === undefined || typeof page.cursor === 'string');
  if (!ok) {
    throw new CloudCliError(
      'BAD_ANSWER',
      `${what}: the answer is not a listing (at most ${PAGE_SIZE} objects, each with a key, a size and an http(s) URL): stopped`,
    );
  }
  return page as ObjectPage;
}

/** Lists every object of a kind and fetches those not here yet; resolves their paths in key order. */
async function fetchKind(
  api: CloudApi,
  crawlId: string,
  kind: ArchiveKind,
  outDir: string,
  counts: DownloadReport['objects'][ArchiveKind],
  log: (line: string) => void,
  limits: DownloadLimits,
): Promise<string[]> {
  const prefix = archivePrefix(kind, crawlId);
  const paths: string[] = [];
  const walk = new PageWalk(`listing the ${kind} objects of crawl ${crawlId}`);
  let cursor: string | undefined;
  do {
    const query = (c: string | undefined) =>
      `/crawls/${crawlId}/objects?kind=${kind}&limit=${PAGE_SIZE}${c === undefined ? '' : `&cursor=${encodeURIComponent(c)}`}`;
    const listedAt = cursor;
    const list = async () =>
      checkedPage(await api.get(query(listedAt), { crawlId }), `GET ${query(listedAt)}`);
    let page = await list();
    // Every name is checked before anything of the page is written.
    const targets = page.objects.map((object) => localPath(outDir, kind, prefix, object.key));
    // The URLs of a page expire (15 minutes): a fetch that finds its URL expired lists it again.
    const relist = async (key: string): Promise<string | undefined> => {
      page = await list();
      return page.objects.find((o) => o.key === key)?.url;
    };
    const work = page.objects.map((object, i) => async () => {
      counts.listed += 1;
      const path = targets[i]!;
      paths.push(path);
      if (presentWithSize(path, object.size)) {
        counts.present += 1;
        return;
      }
      await fetchArchiveObject(object, path, relist, limits);
      counts.fetched += 1;
      counts.bytes += object.size;
    });
    await runPool(work, PARALLEL);
    cursor = walk.next(page.cursor);
  } while (cursor !== undefined);
  if (counts.listed > 0) {
    log(
      `${kind}: ${counts.listed} objects (${counts.fetched} fetched, ${formatBytes(counts.bytes)}; ${counts.present} already here)`,
    );
  }
  return paths.sort();
}

/**
 * Streams one listed object to `path` (through `path.part`, opened without following a link),
 * cut at its listed size and checked against it. A URL that expired (S3's "Request has expired")
 * is replaced by `relist` (the same page listed again); any other refusal names what the API's
 * role lacks. Silence ends a fetch: no headers within `limits.headersTimeoutMs`, no body byte for
 * `limits.idleTimeoutMs` (two more tries, then a `TIMEOUT` error).
 */
export async function fetchArchiveObject(
  object: Listed,
  path: string,
  relist: (key: string) => Promise<string | undefined>,
  limits: DownloadLimits = DEFAULT_LIMITS,
): Promise<void> {
  let url = object.url;
  for (let attempt = 0; ; attempt++) {
    const controller = new AbortController();
    const watchdog = new Watchdog(controller, limits.headersTimeoutMs);
    let response: Response;
    try {
      response = await fetch(url, { signal: controller.signal });
    } catch (error) {
      watchdog.stop();
      if (attempt < 2) continue;
      if (watchdog.fired) throw silent(object, 'no answer', limits.headersTimeoutMs, error);
      throw new CloudCliError(
        'UNREACHABLE',
        `cannot reach the storage for ${object.key} (${networkCode(error) ?? (error as Error).message}); run the same command again to resume`,
        { cause: error },
      );
    }
    watchdog.kick(limits.idleTimeoutMs);
    if (response.status === 403 || response.status === 400) {
      const text = await readAnswerText(response, `GET ${object.key}`, {
        max: ERROR_BODY_BYTES,
        truncate: true,
      }).finally(() => watchdog.stop());
      const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? text.slice(0, 200);
      if (/expired/i.test(message) && attempt < 2) {
        url = (await relist(object.key)) ?? url;
        continue;
      }
      throw new CloudCliError(
        'API_ACCESS_DENIED',
        `S3 refused the download URL the API signed for ${object.key} (${response.status}: ${unescapeXml(message)}): ` +
          "the API's role needs s3:GetObject on the crawl's objects",
      );
    }
    if (!response.ok || response.body === null) {
      watchdog.stop();
      await response.body?.cancel();
      if (attempt < 2) continue;
      throw new CloudCliError('SERVER', `S3 answered ${response.status} for ${object.key}`);
    }
    const part = `${path}.part`;
    let size = 0;
    const out = openNoFollow(part);
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        watchdog.kick(limits.idleTimeoutMs);
        size += chunk.byteLength;
        if (size > object.size) {
          controller.abort();
          throw new CloudCliError(
            'BAD_ANSWER',
            `S3 sent more than the ${object.size} bytes listed for ${object.key}: cut there and refused; run the same command again`,
          );
        }
        await write(out, chunk);
      }
    } catch (error) {
      await close(out).catch(() => undefined);
      rmSync(part, { force: true });
      if (error instanceof CloudCliError) throw error;
      if (attempt < 2) continue;
      throw watchdog.fired
        ? silent(object, `nothing more after ${size} bytes`, limits.idleTimeoutMs, error)
        : new CloudCliError(
            'UNREACHABLE',
            `the download of ${object.key} broke off after ${size} bytes (${networkCode(error) ?? (error as Error).message}); run the same command again to resume`,
            { cause: error },
          );
    } finally {
      watchdog.stop();
    }
    await close(out);
    if (size === object.size) {
      renameSync(part, path);
      return;
    }
    if (attempt >= 2) {
      throw new CloudCliError(
        'SERVER',
        `${object.key}: got ${size} bytes of ${object.size}; run the same command again`,
      );
    }
  }
}

function silent(object: Listed, what: string, ms: number, cause: unknown): CloudCliError {
  return new CloudCliError(
    'TIMEOUT',
    `S3 went silent downloading ${object.key} (${what} for ${ms / 1000} s, three tries): run the same command again to resume`,
    { cause },
  );
}

/** pages.jsonl and warc/index.cdxj from the index objects, a URL once. */
async function writePages(
  outDir: string,
  indexFiles: readonly string[],
  warcNames: ReadonlySet<string>,
  report: DownloadReport,
): Promise<void> {
  const pagesPath = join(outDir, 'pages.jsonl');
  const cdxjPath = join(outDir, 'warc', 'index.cdxj');
  const pages = openNoFollow(`${pagesPath}.part`);
  const cdxj = openNoFollow(`${cdxjPath}.part`);
  const seen = new FingerprintSet();
  for (const file of indexFiles) {
    for await (const line of lines(file)) {
      const item = JSON.parse(line) as PageItem;
      if (!seen.add(item.fp ?? fingerprint(item.url))) {
        report.repeatedPages += 1;
        continue;
      }
      const name = item.warc === undefined ? undefined : basename(item.warc.key);
      const present = name !== undefined && warcNames.has(name) ? name : undefined;
      if (name !== undefined && present === undefined) report.missingWarc += 1;
      await write(pages, `${safeJson(pageRecordOfItem(item, present))}\n`);
      report.pages += 1;
      if (present !== undefined && item.warc !== undefined) {
        const entry = await responseEntry(
          join(outDir, 'warc', present),
          present,
          item.warc.offset,
          item.warc.length,
        );
        if (entry !== undefined) await write(cdxj, cdxjLine(entry));
      }
    }
  }
  await close(pages);
  await close(cdxj);
  renameSync(`${pagesPath}.part`, pagesPath);
  renameSync(`${cdxjPath}.part`, cdxjPath);
}

/** links.jsonl from the links objects, a page once. */
async function writeLinks(
  outDir: string,
  linkFiles: readonly string[],
  report: DownloadReport,
): Promise<void> {
  const path = join(outDir, 'links.jsonl');
  const out = openNoFollow(`${path}.part`);
  const seen = new FingerprintSet();
  for (const file of linkFiles) {
    for await (const line of lines(file)) {
      const record = JSON.parse(line) as LinkRecord;
      if (!seen.add(fingerprint(record.from))) continue;
      await write(out, `${line}\n`);
      report.links += 1;
    }
  }
  await close(out);
  renameSync(`${path}.part`, path);
}

/**
 * The dataset, streamed answer after answer (each names the next in its `Link: <...>; rel="next"`
 * header); 'no-endpoint' when the API has none.
 */
async function fetchDataset(
  api: CloudApi,
  crawlId: string,
  outDir: string,
): Promise<DownloadReport['dataset']> {
  const path = join(outDir, 'dataset.jsonl');
  const out = openNoFollow(`${path}.part`);
  const walk = new PageWalk(`the dataset of crawl ${crawlId}`);
  try {
    let next: string | undefined = `/crawls/${crawlId}/dataset?limit=${DATASET_ROWS_PER_CALL}`;
    for (let first = true; next !== undefined; first = false) {
      const response = await api.send('GET', next);
      if (response.status === 404 && first) {
        await response.body?.cancel();
        return 'no-endpoint';
      }
      if (!response.ok || response.body === null) throw await answerError(response, next, api, crawlId);
      // Chunk by chunk: a pipeline per answer into one stream leaves its listeners on it.
      try {
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) await write(out, chunk);
      } catch (error) {
        throw api.stalled(`GET ${next}`, error);
      }
      next = walk.next(nextLink(response.headers.get('link')));
      if (next !== undefined && !next.startsWith(`/crawls/${crawlId}/dataset?`)) {
        throw new CloudCliError(
          'BAD_ANSWER',
          `the dataset's next link ${safeJson(next.slice(0, 200))} is not a page of /crawls/${crawlId}/dataset: stopped`,
        );
      }
    }
  } finally {
    await close(out);
  }
  renameSync(`${path}.part`, path);
  return 'written';
}

/** Rows asked for per dataset call (the API's most). */
const DATASET_ROWS_PER_CALL = 10_000;

/** The path of a `Link: <path>; rel="next"` header, if there is one. */
export function nextLink(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(',')) {
    const match = /^\s*<([^>]+)>\s*;\s*rel="?next"?\s*$/i.exec(part);
    if (match !== null) return match[1];
  }
  return undefined;
}

/** The duplicate-URL rules as rules.json; how many, or undefined when the API has no endpoint. */
async function fetchRules(api: CloudApi, crawlId: string, outDir: string): Promise<number | undefined> {
  const request = `/crawls/${crawlId}/rules`;
  const answer = await api.call('GET', request);
  // An unknown route answers 404 without the API's JSON error: a deployment from before rules.
  if (answer.status === 404 && (answer.json as { error?: string } | undefined)?.error === undefined) {
    return undefined;
  }
  if (answer.status !== 200) {
    throw apiError(answer, { request: `GET ${request}`, target: api.target, crawlId });
  }
  const { rules } = answer.json as { rules: unknown[] };
  if (!Array.isArray(rules)) {
    throw new CloudCliError('BAD_ANSWER', `GET ${request}: the answer has no list of rules: stopped`);
  }
  await writeWhole(join(outDir, 'rules.json'), `${safeJson(rules, 2)}\n`);
  return rules.length;
}

/** The error a non-2xx answer to a streamed GET means. */
async function answerError(response: Response, path: string, api: CloudApi, crawlId: string): Promise<Error> {
  const text = await readAnswerText(response, `GET ${path}`, { max: ERROR_BODY_BYTES, truncate: true });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: text.slice(0, 200) };
  }
  return apiError({ status: response.status, json }, { request: `GET ${path}`, target: api.target, crawlId });
}

/**
 * Concatenates `files` into `path` (through `path.part`), chunk by chunk: a pipeline per file into
 * one stream leaves its listeners on it (MaxListenersExceededWarning past ten files).
 */
async function concatenate(files: readonly string[], path: string): Promise<void> {
  const out = openNoFollow(`${path}.part`);
  for (const file of files) {
    for await (const chunk of createReadStream(file)) await write(out, chunk as Buffer);
  }
  await close(out);
  renameSync(`${path}.part`, path);
}

/** The non-empty lines of a file, streamed. */
async function* lines(path: string): AsyncGenerator<string> {
  const reader = createInterface({
    input: createReadStream(path, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of reader) if (line.trim() !== '') yield line;
}

async function write(stream: WriteStream, text: string | Uint8Array): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

function close(stream: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.end(() => resolve());
  });
}

/** Runs the tasks, at most `limit` at once; the first failure rejects (after the others end). */
async function runPool(tasks: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < tasks.length && failures.length === 0) {
      const task = tasks[next++]!;
      try {
        await task();
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  if (failures.length > 0) throw failures[0];
}

function unescapeXml(text: string): string {
  return text
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}
