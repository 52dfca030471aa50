/**
 * robots.txt parsing and matching (RFC 9309), lenient in the ways Google's parser is, for one
 * product token. A body is parsed once (per origin and day) into the rules that apply to the agent,
 * arranged for a fast longest-match look-up on every URL (see `RuleSet`).
 */
import { limitRobotsBody } from './body.ts';
import { pathParamsQuery } from './path.ts';
import { normalizePathEscapes, normalizePattern } from './pattern.ts';
import { type RobotsRule, RuleSet } from './rule-set.ts';

export type { RobotsRule } from './rule-set.ts';

/** Counts for reports and tests. Lines are counted as Google does: CR, LF and CRLF each end one. */
export interface RobotsStats {
  /** Lines parsed; a final line end does not start another line, so `''` has 0 and `'a\n'` has 1. */
  lines: number;
  /** User-agent, Allow, Disallow, Sitemap and Crawl-delay lines (wherever they stand). */
  validDirectives: number;
  /** `key: value` lines with any other key. Lines with no key/value shape are not counted. */
  unknownDirectives: number;
  /** Line of the last directive, valid or unknown; 0 when there is none. */
  lastDirectiveLine: number;
  /** `true` when content past the byte limit was ignored. */
  truncated: boolean;
}

/** The rules of one robots.txt as they apply to one agent. */
export interface ParsedRobots {
  /**
   * Which group applies: groups naming the agent (merged), else the `*` groups (merged), else none
   * (everything allowed).
   */
  readonly group: 'agent' | 'star' | 'none';
  /**
   * `true` when the agent may fetch `url` (a full URL, or path and query; the fragment is
   * ignored). The longest matching pattern decides; on a tie Allow wins; no match allows.
   * `/robots.txt` is always allowed. The URL should be canonical (non-ASCII percent-encoded): only
   * its escapes are normalised here, as the patterns' are (`%7e` and `~` compare equal).
   */
  isAllowed(url: string): boolean;
  /** The rule that decides for `url`, or `undefined` when none matches (allowed). */
  decidingRule(url: string): RobotsRule | undefined;
  /**
   * Crawl-delay for the agent in ms (written in seconds, fractions allowed), from the groups that
   * apply. A Crawl-delay line holds for the agents named above it in its group; when several hold,
   * the largest. `undefined` when absent or not a non-negative decimal number. Not capped here: the
   * politeness gate caps it at `maxCrawlDelayMs`.
   */
  readonly crawlDelayMs: number | undefined;
  /** Every Sitemap value in the file, in order, duplicates removed (any group, or none). */
  readonly sitemaps: readonly string[];
  readonly stats: RobotsStats;
}

/** Options of `parseRobots`. */
export interface ParseRobotsOptions {
  /** UTF-8 bytes parsed; at least 512,000 (RFC 9309 §2.5), default 524,288. */
  maxBytes?: number;
}

/**
 * `true` for a valid product token (RFC 9309 §2.2.1): one or more of `a-z A-Z _ -`. Only such
 * tokens can match a group; `parseRobots` accepts any string but nothing else ever matches.
 */
export function isValidProductToken(agent: string): boolean {
  return agent.length > 0 && productTokenLength(agent) === agent.length;
}

/**
 * Parses `body` for the product token `agent` (case-insensitive).
 *
 * Syntax is read as leniently as Google reads it: keys are case-insensitive and recognised by
 * prefix (`user-agent`, `allow`, `disallow`, `sitemap`, plus `crawl-delay`), the typos Google
 * accepts (`useragent`, `user agent`, `dissallow`, `dissalow`, `disalow`, `diasllow`, `disallaw`,
 * `site-map`) are accepted, a missing colon is accepted when the line is exactly two words
 * (`disallow /`), `#` starts a comment, and a leading BOM (or U+FFFD left by a broken one) is
 * skipped. There is no limit per line.
 *
 * Groups (RFC 9309 §2.1-2.2): consecutive User-agent lines open one group, which runs until the next
 * User-agent line that follows a rule; Sitemap, Crawl-delay and unknown lines do not end a group;
 * rules before the first User-agent are ignored. A User-agent value is compared up to its first
 * character outside `a-z A-Z _ -` (`FooBot/2.1` and `FooBot bar` name `FooBot`); `*` (alone or
 * followed by a space) is the global group.
 */
export function parseRobots(body: string, agent: string, options: ParseRobotsOptions = {}): ParsedRobots {
  const { text, cut } = limitRobotsBody(body, options.maxBytes);
  const parser = new Parser(agent);
  parser.run(text);
  const everAgent = parser.everAgent;
  const rules = everAgent ? parser.agentRules : parser.starRules;
  return new RobotsRules(
    everAgent ? 'agent' : parser.everStar ? 'star' : 'none',
    rules,
    everAgent ? parser.agentDelay : parser.starDelay,
    parser.sitemaps,
    { ...parser.stats, truncated: cut },
  );
}

/**
 * Rules that allow (`true`) or disallow (`false`) every URL but `/robots.txt`: what an
 * 'allow-all' or 'disallow-all' cache entry means.
 */
export function uniformRobots(allowed: boolean): ParsedRobots {
  const rules: RobotsRule[] = allowed ? [] : [{ allow: false, pattern: '/', line: 0 }];
  return new RobotsRules('none', rules, undefined, [], {
    lines: 0,
    validDirectives: 0,
    unknownDirectives: 0,
    lastDirectiveLine: 0,
    truncated: false,
  });
}

// ---------------------------------------------------------------------------------------------

class RobotsRules implements ParsedRobots {
  readonly group: 'agent' | 'star' | 'none';
  readonly crawlDelayMs: number | undefined;
  readonly sitemaps: readonly string[];
  readonly stats: RobotsStats;
  readonly #rules: RuleSet;
  readonly #empty: boolean;

  constructor(
    group: 'agent' | 'star' | 'none',
    rules: RobotsRule[],
    crawlDelayMs: number | undefined,
    sitemaps: string[],
    stats: RobotsStats,
  ) {
    this.group = group;
    this.crawlDelayMs = crawlDelayMs;
    this.sitemaps = sitemaps;
    this.stats = stats;
    this.#rules = new RuleSet(rules);
    this.#empty = rules.length === 0;
  }

  isAllowed(url: string): boolean {
    const rule = this.decidingRule(url);
    return rule === undefined || rule.allow;
  }

  decidingRule(url: string): RobotsRule | undefined {
    if (this.#empty) return undefined;
    const path = normalizePathEscapes(pathParamsQuery(url));
    return isRobotsTxt(path) ? undefined : this.#rules.decide(path);
  }
}

/** RFC 9309 §2.2.2: `/robots.txt` is implicitly allowed, whatever the rules say. */
function isRobotsTxt(path: string): boolean {
  return path.startsWith('/robots.txt') && (path.length === 11 || path.charCodeAt(11) === 0x3f);
}

// ---------------------------------------------------------------------------------------------

const Key = { UserAgent: 0, Allow: 1, Disallow: 2, Sitemap: 3, CrawlDelay: 4, Unknown: 5 } as const;
type Key = (typeof Key)[keyof typeof Key];

const USER_AGENT_KEYS = ['user-agent', 'useragent', 'user agent'];
const DISALLOW_KEYS = ['disallow', 'dissallow', 'dissalow', 'disalow', 'diasllow', 'disallaw'];
const SITEMAP_KEYS = ['sitemap', 'site-map'];
const CRAWL_DELAY_KEYS = ['crawl-delay', 'crawldelay', 'crawl_delay', 'crawl delay'];

function classify(key: string): Key {
  const k = key.toLowerCase();
  if (USER_AGENT_KEYS.some((p) => k.startsWith(p))) return Key.UserAgent;
  if (k.startsWith('allow')) return Key.Allow;
  if (DISALLOW_KEYS.some((p) => k.startsWith(p))) return Key.Disallow;
  if (SITEMAP_KEYS.some((p) => k.startsWith(p))) return Key.Sitemap;
  if (CRAWL_DELAY_KEYS.some((p) => k.startsWith(p))) return Key.CrawlDelay;
  return Key.Unknown;
}

const LF = 0x0a;
const CR = 0x0d;
const CRAWL_DELAY = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/** Google's whitespace (C `isspace`): space, \t, \n, \v, \f, \r. Not U+FEFF or NBSP. */
function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

function productTokenLength(value: string): number {
  let i = 0;
  for (; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const lower = c | 0x20; // folds A-Z onto a-z
    if (!((lower >= 0x61 && lower <= 0x7a) || c === 0x2d || c === 0x5f)) break;
  }
  return i;
}

function maxDelay(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

class Parser {
  readonly agentRules: RobotsRule[] = [];
  readonly starRules: RobotsRule[] = [];
  agentDelay: number | undefined;
  starDelay: number | undefined;
  readonly sitemaps: string[] = [];
  readonly stats = { lines: 0, validDirectives: 0, unknownDirectives: 0, lastDirectiveLine: 0 };
  /** Some group named the agent (then only such groups apply). */
  everAgent = false;
  everStar = false;
  readonly #agent: string;
  readonly #sitemapSet = new Set<string>();
  #inAgent = false;
  #inStar = false;
  /** A rule was seen since the last User-agent: the next User-agent line opens a new group. */
  #seenRule = false;

  constructor(agent: string) {
    this.#agent = agent.toLowerCase();
  }

  run(text: string): void {
    const n = text.length;
    // A BOM, or the U+FFFD a decoder leaves for a cut-off one, is not part of the first line.
    let lineStart = n > 0 && (text.charCodeAt(0) === 0xfeff || text.charCodeAt(0) === 0xfffd) ? 1 : 0;
    let line = 0;
    for (let i = lineStart; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      this.#line(text, lineStart, i, ++line);
      if (c === CR && text.charCodeAt(i + 1) === LF) i++;
      lineStart = i + 1;
    }
    if (lineStart < n) this.#line(text, lineStart, n, ++line);
    this.stats.lines = line;
  }

  #line(text: string, lineStart: number, lineEnd: number, line: number): void {
    // Work on the line alone, so no search runs past its end into the rest of the file.
    const raw = text.slice(lineStart, lineEnd);
    const hash = raw.indexOf('#');
    let end = hash < 0 ? raw.length : hash;
    let start = 0;
    while (start < end && isSpace(raw.charCodeAt(start))) start++;
    while (end > start && isSpace(raw.charCodeAt(end - 1))) end--;
    if (start === end) return;

    let sep = raw.indexOf(':', start);
    let valueStart: number;
    if (sep < 0 || sep >= end) {
      // Google accepts whitespace for a forgotten colon, but only between exactly two words.
      sep = start;
      while (sep < end && !isSpace(raw.charCodeAt(sep))) sep++;
      if (sep === end) return;
      valueStart = sep;
      while (isSpace(raw.charCodeAt(valueStart))) valueStart++;
      for (let i = valueStart; i < end; i++) if (isSpace(raw.charCodeAt(i))) return;
    } else {
      valueStart = sep + 1;
      while (valueStart < end && isSpace(raw.charCodeAt(valueStart))) valueStart++;
    }
    let keyEnd = sep;
    while (keyEnd > start && isSpace(raw.charCodeAt(keyEnd - 1))) keyEnd--;
    if (keyEnd === start) return;

    const key = classify(raw.slice(start, keyEnd));
    const value = raw.slice(valueStart, end);
    this.stats.lastDirectiveLine = line;
    if (key === Key.Unknown) {
      this.stats.unknownDirectives++;
      return;
    }
    this.stats.validDirectives++;
    switch (key) {
      case Key.UserAgent:
        this.#userAgent(value);
        break;
      case Key.Allow:
      case Key.Disallow:
        this.#rule(key === Key.Allow, value, line);
        break;
      case Key.Sitemap:
        if (value.length > 0 && !this.#sitemapSet.has(value)) {
          this.#sitemapSet.add(value);
          this.sitemaps.push(value);
        }
        break;
      case Key.CrawlDelay:
        this.#crawlDelay(value);
        break;
    }
  }

  #userAgent(value: string): void {
    if (this.#seenRule) {
      this.#inAgent = this.#inStar = this.#seenRule = false;
    }
    // Google: `*` followed by a space and more text is still the global group.
    if (value.charCodeAt(0) === 0x2a && (value.length === 1 || isSpace(value.charCodeAt(1)))) {
      this.#inStar = this.everStar = true;
      return;
    }
    const length = productTokenLength(value);
    if (length > 0 && length === this.#agent.length && value.slice(0, length).toLowerCase() === this.#agent) {
      this.#inAgent = this.everAgent = true;
    }
  }

  #rule(allow: boolean, value: string, line: number): void {
    this.#seenRule = true;
    const rules = this.#inAgent ? this.agentRules : this.#inStar ? this.starRules : undefined;
    if (rules === undefined) return;
    const pattern = normalizePattern(value);
    // An empty pattern matches nothing (RFC 9309 §2.2.2: an empty Disallow allows everything).
    if (pattern.length === 0) return;
    rules.push({ allow, pattern, line });
    if (allow) {
      // Google: allowing `/dir/index.html` (or `.htm`) also allows `/dir/` itself.
      const slash = pattern.lastIndexOf('/');
      if (slash >= 0 && pattern.startsWith('/index.htm', slash)) {
        rules.push({ allow: true, pattern: `${pattern.slice(0, slash + 1)}$`, line });
      }
    }
  }

  #crawlDelay(value: string): void {
    if (!(this.#inAgent || this.#inStar) || !CRAWL_DELAY.test(value)) return;
    const ms = Math.round(Number(value) * 1000);
    if (!Number.isFinite(ms)) return;
    // A delay holds for the agents named above it, not for those named after it in the same group:
    // `User-agent: *`, `Crawl-delay: 10`, (blank), `User-agent: FastBot`, `Crawl-delay: 1` is one
    // group for the rules (blank lines do not end groups), yet plainly means 1 s for FastBot.
    // Several delays for one agent: the largest, the polite reading.
    if (this.#inAgent) this.agentDelay = maxDelay(this.agentDelay, ms);
    else if (this.#inStar) this.starDelay = maxDelay(this.starDelay, ms);
  }
}
