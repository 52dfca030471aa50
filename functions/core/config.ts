import { z } from 'zod';
import { networkList, networkProblems } from './net/address-policy.ts';

/**
 * The one crawl configuration schema: CLI flags, `--config` files, the HTTP API body and the
 * Lambdas all parse through it. Keys are camelCase; the CLI flag for `maxPages` is `--max-pages`.
 */

/** Query parameters removed by default: analytics/ad click tracking and session ids. `*` ends a prefix. */
export const DEFAULT_STRIP_PARAMS: readonly string[] = [
  // tracking
  'utm_*',
  'gclid',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'fbclid',
  'msclkid',
  'yclid',
  'twclid',
  'ttclid',
  'li_fat_id',
  'igshid',
  'mc_cid',
  'mc_eid',
  '_ga',
  '_gl',
  '_hsenc',
  '_hsmi',
  'mkt_tok',
  'oly_anon_id',
  'oly_enc_id',
  'vero_id',
  // session ids
  'jsessionid',
  'phpsessid',
  'aspsessionid*',
  'asp.net_sessionid',
  'sid',
  'sessionid',
  'session_id',
  'sessid',
  'cfid',
  'cftoken',
  'zenid',
  'osCsid',
];

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

/**
 * Upper bounds of the numeric settings: what a laptop, and the cloud worker running its hosts'
 * pages at once, can honour. A wait longer than `setTimeout`'s 2^31 - 1 ms fires at once (Node warns and
 * uses 1 ms), so no duration may come near it.
 */
export const CONFIG_LIMITS = {
  /** Waits between requests to one host, and caps on them: a day. */
  waitMs: 86_400_000,
  /** The first retry's wait: an hour (it doubles per retry, capped by maxRetryAfterMs). */
  retryBaseDelayMs: 3_600_000,
  /** Network timeouts: ten minutes. */
  timeoutMs: 600_000,
  /** Decoded body bytes: 16 MiB (the cloud worker's memory holds one body per host at the default cap: lambda-settings.ts). */
  maxBodyBytes: 16 * 1024 * 1024,
  /** robots.txt bytes parsed: 2 MiB (RFC 9309 asks for at least 500 KiB). */
  maxRobotsBytes: 2 * 1024 * 1024,
  /** URL-seen cache entries: 2^20 (about 25 MB of typed arrays per crawl). */
  seenCacheSize: 1_048_576,
  /** Page budgets. */
  pages: 1_000_000_000,
  maxDepth: 1000,
  maxUrlLength: 16_384,
  maxSegmentRepeats: 100,
  delayFactor: 1000,
  /** How often the lambda page is redistributed: an hour. */
  redistributeEveryMs: 3_600_000,
  /** Revisit intervals of a recrawl: a year. */
  recrawlIntervalMs: 365 * 86_400_000,
} as const;

/** A bounded integer setting: the message names the limit. */
const atMost = (base: z.ZodNumber, limit: number, unit = '') =>
  base.max(limit, `at most ${limit.toLocaleString('en-US')}${unit}`);

/**
 * One named field of `extract`: the elements a CSS selector matches, the text of each (or the
 * value of `attr`), the first value (default) or `all` of them. The string form
 * `"selector"` / `"selector@attr"` is short for `{ selector, attr, all: true }`.
 */
export const extractFieldSchema = z
  .object({
    selector: z.string().min(1),
    attr: z
      .string()
      .regex(/^[A-Za-z_:][-A-Za-z0-9_:.]*$/, 'expected an attribute name such as "href" or "data-id"')
      .optional(),
    all: z.boolean().default(false),
  })
  .strict();

/** Named fields pulled from each HTML page (pages.jsonl `extracted`, and dataset.jsonl). */
const extractSchema = z.record(
  z
    .string()
    .min(1, 'a field name cannot be empty')
    .refine(
      (name) => name !== 'url',
      '"url" is the page\'s URL in dataset.jsonl; give the field another name',
    ),
  z.union([z.string().min(1), extractFieldSchema]),
);

/**
 * The file of `--extract-config`: `{ "fields": { "title": { "selector": "h1" }, "links":
 * { "selector": "a", "attr": "href", "all": true } } }`, merged into the `extract` setting.
 */
export const extractConfigSchema = z.object({ fields: extractSchema }).strict();

export const crawlConfigSchema = z
  .object({
    /** Start URLs (http or https). */
    seeds: z.array(z.string().min(1)).min(1, 'give at least one seed URL'),
    /** host: the seeds' hosts only; domain: their registrable domains (public suffix list); any. */
    scope: z.enum(['host', 'domain', 'any']).default('domain'),
    /** Regular expressions; when any is given, a URL must match one of them. */
    include: z.array(z.string()).default([]),
    /** Regular expressions; a URL matching any of them is skipped. */
    exclude: z.array(z.string()).default([]),
    /** Stop after this many pages fetched (responses of any status). Unlimited when absent. */
    maxPages: atMost(positiveInt, CONFIG_LIMITS.pages).optional(),
    /** Seeds are depth 0. */
    maxDepth: atMost(nonNegativeInt, CONFIG_LIMITS.maxDepth).default(25),
    /** Per-host budget of requests (pages), a trap defence. */
    maxPagesPerHost: atMost(positiveInt, CONFIG_LIMITS.pages).default(50_000),
    /** URLs longer than this (in characters, canonical form) are skipped. */
    maxUrlLength: atMost(positiveInt, CONFIG_LIMITS.maxUrlLength).default(2048),
    /**
     * A path in which one segment occurs more than this many times is a trap (`/a/a/`,
     * `/files/a/b/a/`); numeric segments do not count (`/2024/01/01/`).
     */
    maxSegmentRepeats: atMost(positiveInt, CONFIG_LIMITS.maxSegmentRepeats).default(1),
    /** Requests in flight across all hosts (never more than one per host). */
    concurrency: positiveInt.max(1024).default(16),
    /** Minimum gap between two requests to one host, in ms. */
    delayMs: atMost(nonNegativeInt, CONFIG_LIMITS.waitMs, ' ms (a day)').default(1000),
    /** The gap is at least this multiple of the host's last response time. */
    delayFactor: atMost(z.number().nonnegative(), CONFIG_LIMITS.delayFactor).default(5),
    /** Caps the factor-based gap, in ms. */
    maxDelayMs: atMost(nonNegativeInt, CONFIG_LIMITS.waitMs, ' ms (a day)').default(60_000),
    /** Crawl-delay from robots.txt is honoured up to this many ms. */
    maxCrawlDelayMs: atMost(nonNegativeInt, CONFIG_LIMITS.waitMs, ' ms (a day)').default(30_000),
    /** Retry-After (429/503) is honoured up to this many ms, for the whole host. */
    maxRetryAfterMs: atMost(nonNegativeInt, CONFIG_LIMITS.waitMs, ' ms (a day)').default(600_000),
    /** Retries after a 5xx, 429 or timeout before giving up. */
    maxRetries: nonNegativeInt.max(20).default(2),
    /** First retry waits this long; each next one twice as long (with jitter). */
    retryBaseDelayMs: atMost(nonNegativeInt, CONFIG_LIMITS.retryBaseDelayMs, ' ms (an hour)').default(2000),
    userAgent: z.string().min(1).default('crawlstack/0.1 (+https://github.com/crawlstack/crawlstack)'),
    /** Product token matched against robots.txt `User-agent` lines. */
    robotsAgent: z
      .string()
      .regex(/^[A-Za-z_-]+$/, 'a robots.txt product token has only letters, "_" and "-"')
      .default('crawlstack'),
    /**
     * Non-public networks the SSRF guard lets the crawler connect to: `false` (none), `true`
     * (loopback, RFC 1918 + unique-local, CGNAT: never cloud metadata), or the networks named, as
     * a list or "a,b": names (loopback, private, link-local, cgnat, metadata, ...) and CIDR ranges
     * (`10.1.0.0/16`, `fd00::/8`). core/net/address-policy.ts has the rules.
     */
    allowPrivate: z
      .union([z.boolean(), z.string(), z.array(z.string())])
      .default(false)
      .superRefine((value, ctx) => {
        if (typeof value === 'boolean') return;
        for (const message of networkProblems(networkList(value))) ctx.addIssue({ code: 'custom', message });
      })
      .transform((value): boolean | string[] => (typeof value === 'boolean' ? value : networkList(value))),
    connectTimeoutMs: atMost(positiveInt, CONFIG_LIMITS.timeoutMs, ' ms').default(10_000),
    /** From request sent to response headers received. */
    headersTimeoutMs: atMost(positiveInt, CONFIG_LIMITS.timeoutMs, ' ms').default(20_000),
    /** Longest silence between two body chunks. */
    idleTimeoutMs: atMost(positiveInt, CONFIG_LIMITS.timeoutMs, ' ms').default(20_000),
    /** Whole request, body included: a body trickling at 1 byte/s is cut here. */
    totalTimeoutMs: atMost(positiveInt, CONFIG_LIMITS.timeoutMs, ' ms').default(60_000),
    /** Cap on the decoded (decompressed) body. */
    maxBodyBytes: atMost(positiveInt, CONFIG_LIMITS.maxBodyBytes, ' bytes (16 MiB)').default(
      10 * 1024 * 1024,
    ),
    maxRedirects: nonNegativeInt.max(50).default(10),
    /** robots.txt bytes parsed (RFC 9309 asks for at least 500 KiB). */
    maxRobotsBytes: atMost(
      z.number().int().min(512_000),
      CONFIG_LIMITS.maxRobotsBytes,
      ' bytes (2 MiB)',
    ).default(512 * 1024),
    /** A fetched robots.txt is used at most this long (RFC 9309: 24 h at most). */
    robotsTtlMs: positiveInt.max(86_400_000).default(86_400_000),
    /** After a 5xx or unreachable robots.txt the host is disallowed and retried after this long. */
    robotsErrorTtlMs: atMost(positiveInt, CONFIG_LIMITS.waitMs, ' ms (a day)').default(300_000),
    /** Query parameters removed during canonicalization (`*` ends a prefix; case-insensitive). */
    stripParams: z.array(z.string().min(1)).default([...DEFAULT_STRIP_PARAMS]),
    /** Sort query parameters during canonicalization. */
    sortQuery: z.boolean().default(true),
    /** Link kinds that are followed (all kinds are recorded). */
    follow: z.array(z.enum(['page', 'image', 'document', 'other'])).default(['page']),
    /** Honour rel=nofollow, meta robots nofollow and X-Robots-Tag nofollow. */
    respectNofollow: z.boolean().default(true),
    /** Entries in the in-memory URL-seen cache (Mercator used 2^18). */
    seenCacheSize: atMost(positiveInt, CONFIG_LIMITS.seenCacheSize).default(262_144),
    /**
     * Record the URL-seen trace (each fingerprint looked up, 8 bytes) for `crawlstack
     * cache-study`: about a thirteenth of links.jsonl's size.
     */
    seenTrace: z.boolean().default(true),
    /**
     * Named CSS selectors whose text (or attribute) is recorded with each HTML page and in
     * dataset.jsonl (builds a DOM with linkedom): `{ name: "selector[@attr]" }` or
     * `{ name: { selector, attr?, all? } }`.
     */
    extract: extractSchema.default({}),
    /**
     * Which URL goes next: `aopic` (greedy by AOPIC cash: important pages first, traps starve) or
     * `bfs` (breadth-first, in discovery order). Always within each host's politeness.
     */
    order: z.enum(['aopic', 'bfs']).default('aopic'),
    /** AOPIC: share of a fetched page's cash that goes to the virtual "lambda page". */
    aopicTax: z.number().min(0).max(1).default(0.1),
    /** AOPIC: how often the lambda page's cash is spread over all known pages, ms. */
    redistributeEveryMs: atMost(positiveInt, CONFIG_LIMITS.redistributeEveryMs, ' ms (an hour)').default(
      2000,
    ),
    /**
     * AOPIC in the cloud (SQS has no priorities): a new URL that receives less than this share
     * of what an ordinary link of its page receives is parked (a link to the page's own path
     * pattern gets a tenth), and the scheduler admits the richest parked URLs as the frontier
     * empties. 0 queues every URL at once.
     */
    aopicAdmitShare: z.number().min(0).max(1).default(0.5),
    /** SimHash Hamming distance up to which two pages are near-duplicates (0 turns it off). */
    nearDuplicateDistance: nonNegativeInt.max(6).default(3),
    /** Detect calendar traps and link generators (URL patterns whose pages are near-duplicates). */
    trapDetectors: z.boolean().default(true),
    /** Probe each site once with a made-up URL to recognize soft-404 pages. */
    soft404Probe: z.boolean().default(true),
    /** Learn each host's duplicate-URL rules from its exact duplicates and apply them (docs/duplicate-urls.md). */
    duplicateUrlRules: z.boolean().default(true),
    /**
     * Distinct duplicate pairs a duplicate-URL rule needs (with no counter-example) before it is
     * applied. 2, measured: 3 left 1.0-1.2% of the quality bench's requests on duplicates, 2 left
     * 0.8-1.0% with no wrong rule (docs/quality-bench.md). One pair suffices when one page declares
     * the other its canonical URL (a confirmed pair, docs/duplicate-urls.md).
     */
    duplicateUrlRuleSupport: positiveInt.max(1000).default(2),
    /** Share of the URLs an active duplicate-URL rule merges that are fetched anyway, to keep testing it. */
    duplicateUrlRuleAudit: z.number().min(0).max(0.5).default(0.02),
    /** Read sites' sitemaps (robots.txt `Sitemap:` lines, else /sitemap.xml) to discover pages (docs/sitemaps.md). */
    sitemaps: z.boolean().default(true),
    /** Uncompressed bytes read per sitemap file (the protocol allows 50 MiB). */
    maxSitemapBytes: positiveInt.min(65_536).max(52_428_800).default(52_428_800),
    /** Sitemap files fetched per site, indexes included. */
    maxSitemapFiles: positiveInt.max(100_000).default(100),
    /** Page URLs taken from a site's sitemaps. */
    maxSitemapUrls: positiveInt.max(10_000_000).default(100_000),
    /** Levels of sitemap indexes followed (1 is the protocol's; nested indexes need 2). */
    maxSitemapDepth: nonNegativeInt.max(5).default(2),
    /**
     * AOPIC: the guessed `/sitemap.xml` (a site whose robots.txt names none) is a link of its root
     * page worth this share of one of the page's other links (docs/sitemaps.md).
     */
    sitemapShare: z.number().min(0).max(1).default(0.1),
    /**
     * Hosts whose sitemap files are read although the crawl's scope does not take them (a site's
     * sitemaps on a CDN host): a sitemap file passes a link's gates before its host is asked
     * anything, and for these hosts the scope part is lifted (`exclude`, `include`, depth still
     * hold). Their pages are not crawled; the sitemaps' entries still obey the scope.
     */
    sitemapHosts: z
      .array(
        z
          .string()
          .regex(
            /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/i,
            'a sitemap host is a host name without scheme, port or path (cdn.example.com)',
          )
          .transform((host) => host.toLowerCase()),
      )
      .max(100)
      .default([]),
    /**
     * Distinct links recorded (links.jsonl) and followed per page, in document order; the rest are
     * counted on the page record (`dropped.links`). Heritrix's default is the same 6,000.
     */
    maxLinksPerPage: positiveInt.max(100_000).default(6000),
    /** `extract` values recorded per page, all selectors together; the rest are counted. */
    maxExtractValues: positiveInt.max(1_000_000).default(10_000),
    /** `extract` characters recorded per page, all selectors together; the rest are counted. */
    maxExtractChars: positiveInt.max(100_000_000).default(1_000_000),
    /**
     * Minimum transfer rate of a body, bytes per second, measured over `minTransferRateTimeMs`
     * (curl's --speed-limit): a slower body is cut there and kept as `truncated: "time"`. 0: off.
     */
    minTransferRate: nonNegativeInt.max(100_000_000).default(100),
    /** The window of `minTransferRate`, ms (curl's --speed-time). */
    minTransferRateTimeMs: z.number().int().min(1000).max(3_600_000).default(15_000),
    /**
     * Politeness per IP address as well as per host name: hosts that resolve to one address share
     * its one-request-at-a-time rule and gap (one server behind many names). Turn it off for
     * crawls of many sites behind a shared CDN or hosting address.
     */
    politenessPerIp: z.boolean().default(true),
    /**
     * How a recrawl chooses the known pages it visits (docs/recrawl.md): `adaptive` (those whose
     * revisit interval passed, likeliest changed first), `uniform` (least recently visited first)
     * or `full` (all of them).
     */
    recrawlSchedule: z.enum(['adaptive', 'uniform', 'full']).default('adaptive'),
    /**
     * Cloud: keep each page's validators, payload digest and links (one DynamoDB item per page,
     * about one write unit) so that the crawl can be recrawled with conditional GETs. Off by
     * default: a crawl nobody recrawls does not pay for it. The embedded crawler keeps them in its
     * folder whatever this says.
     */
    keepArchive: z.boolean().default(false),
    /** Known pages a recrawl round visits at most (its request budget); absent: every one it chooses. */
    recrawlBudget: atMost(positiveInt, CONFIG_LIMITS.pages).optional(),
    /** Shortest revisit interval of a page, ms: however often it changes, it is not visited sooner. */
    recrawlMinIntervalMs: nonNegativeInt.max(CONFIG_LIMITS.recrawlIntervalMs).default(3_600_000),
    /** Longest revisit interval, ms: a page that never changed is still visited this often. */
    recrawlMaxIntervalMs: positiveInt.max(CONFIG_LIMITS.recrawlIntervalMs).default(30 * 86_400_000),
  })
  .strict()
  .refine((config) => config.recrawlMinIntervalMs <= config.recrawlMaxIntervalMs, {
    message: 'recrawlMinIntervalMs must not exceed recrawlMaxIntervalMs',
    path: ['recrawlMinIntervalMs'],
  });

/** A validated crawl configuration with every default filled in. */
export type CrawlConfig = z.infer<typeof crawlConfigSchema>;
/** What a user may write: every key but `seeds` optional. */
export type CrawlConfigInput = z.input<typeof crawlConfigSchema>;

export type ConfigResult = { ok: true; config: CrawlConfig } | { ok: false; problems: string[] };

/**
 * Validates a crawl configuration. Problems name the setting and what is wrong with it,
 * e.g. `maxPages: expected a positive integer, got -3`.
 */
export function parseCrawlConfig(input: unknown): ConfigResult {
  const parsed = crawlConfigSchema.safeParse(input, { reportInput: true });
  // Seeds and patterns are checked even when other settings are wrong: one answer lists every
  // problem, in the order schema, seeds, patterns.
  const raw = (input ?? {}) as Record<string, unknown>;
  const strings = (key: string): [string, number][] =>
    Array.isArray(raw[key])
      ? (raw[key] as unknown[]).flatMap((v, i): [string, number][] => (typeof v === 'string' ? [[v, i]] : []))
      : [];
  const problems: string[] = parsed.success ? [] : parsed.error.issues.map((issue) => describeIssue(issue));
  for (const [seed, i] of strings('seeds')) {
    const problem = seed === '' ? undefined : seedProblem(seed);
    if (problem) problems.push(`seeds[${i}]: ${problem}`);
  }
  for (const key of ['include', 'exclude'] as const) {
    for (const [pattern, i] of strings(key)) {
      try {
        new RegExp(pattern);
      } catch (error) {
        problems.push(`${key}[${i}]: not a valid regular expression (${(error as Error).message})`);
      }
    }
  }
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  return { ok: true, config: parsed.data };
}

function seedProblem(seed: string): string | undefined {
  let url: URL;
  try {
    url = new URL(seed);
  } catch {
    return `"${seed}" is not an absolute URL (write it with http:// or https://)`;
  }
  if (url.username !== '' || url.password !== '') {
    // Refused rather than redacted: the seed would be stored and returned in every record of the
    // crawl (pages, WARC, status, the API's answers), and sent on to every redirect target.
    url.username = url.username === '' ? '' : '***';
    url.password = url.password === '' ? '' : '***';
    return `"${url.href}" holds a user name or password: credentials in seed URLs are refused (they would be stored in every record of the crawl); give the URL without them`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `"${seed}" uses ${url.protocol.slice(0, -1)}:, only http and https can be crawled`;
  }
  return undefined;
}

/** One problem per issue, naming its setting: `maxPages: expected ... (got -3)`. */
export function describeIssue(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[] = []): string {
  const full = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union') {
    // Report the branch the input was meant for: the one that got past the type check.
    const meant = issue.errors.filter(
      (branch) =>
        !(branch.length === 1 && branch[0]!.code === 'invalid_type' && branch[0]!.path.length === 0),
    );
    if (meant.length === 1) return meant[0]!.map((inner) => describeIssue(inner, full)).join('\n');
    if (meant.length === 0) {
      const expected = issue.errors.map((branch) => (branch[0] as { expected?: string }).expected);
      return `${full.map(String).join('.')}: expected ${expected.join(' or ')} (got ${JSON.stringify(issue.input)})`;
    }
  }
  if (issue.code === 'invalid_key' && issue.issues.length > 0) {
    return `${full.map(String).join('.')}: ${issue.issues.map((inner) => inner.message).join('; ')}`;
  }
  const path = full.length > 0 ? full.map(String).join('.') : '(config)';
  if (issue.code === 'unrecognized_keys') {
    const what = full.length > 0 ? 'key' : 'setting';
    return `${path}: unknown ${what}${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  }
  const got = 'input' in issue && issue.input !== undefined ? ` (got ${JSON.stringify(issue.input)})` : '';
  return `${path}: ${issue.message}${got}`;
}
