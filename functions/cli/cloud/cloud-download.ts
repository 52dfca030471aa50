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
 */
import { once } from 'node:events';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  type WriteStream,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
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
}): Promise<DownloadReport> {
  const { api, crawlId, outDir, log } = options;
  const now = options.now ?? Date.now;
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
    files[kind] = await fetchKind(api, crawlId, kind, outDir, report.objects[kind], log);
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
  writeFileSync(join(outDir, 'summary.json'), `${safeJson(summary, 2)}\n`);
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
  for (const dir of ['warc', 'cloud/index', 'cloud/links', 'cloud/trace']) {
    mkdirSync(join(outDir, dir), { recursive: true });
  }
  writeFileSync(marker, `${JSON.stringify({ crawlId, api: apiUrl }, null, 2)}\n`);
}

/** Where an object of `kind` goes. */
function localPath(outDir: string, kind: ArchiveKind, prefix: string, key: string): string {
  const name = key.slice(prefix.length).replaceAll('/', '_');
  return kind === 'warc' ? join(outDir, 'warc', basename(key)) : join(outDir, 'cloud', kind, name);
}

/** Lists every object of a kind and fetches those not here yet; resolves their paths in key order. */
async function fetchKind(
  api: CloudApi,
  crawlId: string,
  kind: ArchiveKind,
  outDir: string,
  counts: DownloadReport['objects'][ArchiveKind],
  log: (line: string) => void,
): Promise<string[]> {
  const prefix = archivePrefix(kind, crawlId);
  const paths: string[] = [];
  let cursor: string | undefined;
  do {
    const query = (c: string | undefined) =>
      `/crawls/${crawlId}/objects?kind=${kind}&limit=${PAGE_SIZE}${c === undefined ? '' : `&cursor=${c}`}`;
    const listedAt = cursor;
    let page = await api.get<ObjectPage>(query(listedAt), { crawlId });
    // The URLs of a page expire (15 minutes): a fetch that finds its URL expired lists it again.
    const relist = async (key: string): Promise<string | undefined> => {
      page = await api.get<ObjectPage>(query(listedAt), { crawlId });
      return page.objects.find((o) => o.key === key)?.url;
    };
    const work = page.objects.map((object) => async () => {
      counts.listed += 1;
      const path = localPath(outDir, kind, prefix, object.key);
      paths.push(path);
      if (existsSync(path) && statSync(path).size === object.size) {
        counts.present += 1;
        return;
      }
      await fetchArchiveObject(object, path, relist);
      counts.fetched += 1;
      counts.bytes += object.size;
    });
    await runPool(work, PARALLEL);
    cursor = page.cursor;
  } while (cursor !== undefined);
  if (counts.listed > 0) {
    log(
      `${kind}: ${counts.listed} objects (${counts.fetched} fetched, ${formatBytes(counts.bytes)}; ${counts.present} already here)`,
    );
  }
  return paths.sort();
}

/**
 * Streams one listed object to `path` (through `path.part`), checking its size. A URL that
 * expired (S3's "Request has expired") is replaced by `relist` (the same page listed again);
 * any other refusal names what the API's role lacks.
 */
export async function fetchArchiveObject(
  object: Listed,
  path: string,
  relist: (key: string) => Promise<string | undefined>,
): Promise<void> {
  let url = object.url;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url);
    } catch (error) {
      if (attempt < 2) continue;
      throw new CloudCliError(
        'UNREACHABLE',
        `cannot reach the storage for ${object.key} (${networkCode(error) ?? (error as Error).message}); run the same command again to resume`,
        { cause: error },
      );
    }
    if (response.status === 403 || response.status === 400) {
      const text = await response.text();
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
      await response.body?.cancel();
      if (attempt < 2) continue;
      throw new CloudCliError('SERVER', `S3 answered ${response.status} for ${object.key}`);
    }
    const part = `${path}.part`;
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(part));
    const size = statSync(part).size;
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

/** pages.jsonl and warc/index.cdxj from the index objects, a URL once. */
async function writePages(
  outDir: string,
  indexFiles: readonly string[],
  warcNames: ReadonlySet<string>,
  report: DownloadReport,
): Promise<void> {
  const pagesPath = join(outDir, 'pages.jsonl');
  const cdxjPath = join(outDir, 'warc', 'index.cdxj');
  const pages = createWriteStream(`${pagesPath}.part`);
  const cdxj = createWriteStream(`${cdxjPath}.part`);
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
  const out = createWriteStream(`${path}.part`);
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
  const out = createWriteStream(`${path}.part`);
  try {
    let next: string | undefined = `/crawls/${crawlId}/dataset?limit=${DATASET_ROWS_PER_CALL}`;
    for (let first = true; next !== undefined; first = false) {
      const response = await api.send('GET', next);
      if (response.status === 404 && first) {
        await response.body?.cancel();
        return 'no-endpoint';
      }
      if (!response.ok || response.body === null) throw await answerError(response, next, api, crawlId);
      await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), out, { end: false });
      next = nextLink(response.headers.get('link'));
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
  const path = join(outDir, 'rules.json');
  writeFileSync(`${path}.part`, `${safeJson(rules, 2)}\n`);
  renameSync(`${path}.part`, path);
  return rules.length;
}

/** The error a non-2xx answer to a streamed GET means. */
async function answerError(response: Response, path: string, api: CloudApi, crawlId: string): Promise<Error> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: text.slice(0, 200) };
  }
  return apiError({ status: response.status, json }, { request: `GET ${path}`, target: api.target, crawlId });
}

/** Concatenates `files` into `path` (through `path.part`). */
async function concatenate(files: readonly string[], path: string): Promise<void> {
  const out = createWriteStream(`${path}.part`);
  for (const file of files) await pipeline(createReadStream(file), out, { end: false });
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

async function write(stream: WriteStream, text: string): Promise<void> {
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
