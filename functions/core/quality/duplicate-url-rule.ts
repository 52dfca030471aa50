/**
 * Duplicate-URL rules: rewrites of a site's URLs that keep naming the same page on that site
 * (DUST: Bar-Yossef, Keidar, Schonfeld, "Do not crawl in the DUST", WWW 2007; Dasgupta, Kumar,
 * Sasturkar, "De-duping URLs via rewrite rules", KDD 2008; Koppula et al., "Learning URL patterns
 * for webpage de-duplication", WSDM 2010). Unlike canonicalization, each rule is true of one site
 * and false of another, so rules are learned per host (duplicate-url-rules.ts); this file holds
 * what a rule is, how it rewrites a URL, and which rules could explain two URLs with one content.
 *
 * Every rule changes only the path and query of a canonical URL, never its origin, and is
 * idempotent. Rules compose in a fixed order (RULE_KIND_ORDER), repeated until nothing changes.
 */

/** A rewrite that a site's duplicates showed to be content-neutral there. */
export type DuplicateUrlRule =
  /** The path is case-insensitive: it is lowercased (percent-escapes keep their upper-case hex). */
  | { kind: 'case-insensitive' }
  /**
   * A path under `from` is the same page under `to` (`/en/a/b` is `/a/b`); both start and end with
   * `/`, and `to` never starts with `from` (the rewrite would grow forever).
   */
  | { kind: 'alias-prefix'; from: string; to: string }
  /** A directory's index document can be dropped: `/dir/index.html` is `/dir/`. */
  | { kind: 'drop-suffix'; suffix: string }
  /** A directory answers without its slash: `/dir` is `/dir/` (for a last segment without a dot). */
  | { kind: 'trailing-slash' }
  /**
   * The query parameter `name` does not change the page at `at`: it is removed there. `at` is the
   * path it was learned on (`/item`), or a directory prefix ending in `*` (`/docs/*`, `/*`: the whole
   * origin) once pairs on two paths under it showed it (docs/duplicate-urls.md, "Parameter scope").
   */
  | { kind: 'ignore-param'; name: string; at: string }
  /**
   * Paths `<dir><number>` without a query are aliases of pages the site names otherwise (Drupal's
   * `/node/62` for `/notes/mind-hopes-62.html`): nothing says which page, so the rule rewrites
   * nothing; the crawl skips such URLs, fetching the pages under the names the site links and
   * declares canonical (duplicate-url-rules.ts derives it only from such declarations).
   */
  | { kind: 'alias-namespace'; dir: string };

/** The kinds of rule, in the order they are applied. */
export type DuplicateUrlRuleKind = DuplicateUrlRule['kind'];

/**
 * The fixed composition order: case first, so the path rules see one spelling; the prefix before
 * the suffix (they touch opposite ends); the suffix before the slash (dropping `index.html` leaves
 * `/dir/`); query parameters last (they never depend on the path).
 */
export const RULE_KIND_ORDER: readonly DuplicateUrlRuleKind[] = [
  'case-insensitive',
  'alias-prefix',
  'drop-suffix',
  'trailing-slash',
  'ignore-param',
  'alias-namespace',
];

/**
 * Directory index documents servers use (Apache, nginx, IIS, PHP, JSP, ColdFusion). A suffix rule
 * is derived for these names and for any other last segment with an extension (`home.xhtml`);
 * a bare name without a dot (`/shop/all`) is more likely a page of its own.
 */
export const INDEX_DOCUMENTS: readonly string[] = [
  'index.html',
  'index.htm',
  'index.shtml',
  'index.xhtml',
  'index.php',
  'index.php3',
  'index.asp',
  'index.aspx',
  'index.jsp',
  'index.cgi',
  'index.cfm',
  'index',
  'default.htm',
  'default.html',
  'default.asp',
  'default.aspx',
  'default',
  'home.html',
  'home.htm',
  'welcome.html',
];

const INDEX_DOCUMENT_SET = new Set(INDEX_DOCUMENTS);

/** A stable one-line name of a rule (`drop-suffix index.html`, `alias-prefix /en/ -> /`); its identity. */
export function ruleKey(rule: DuplicateUrlRule): string {
  switch (rule.kind) {
    case 'case-insensitive':
    case 'trailing-slash':
      return rule.kind;
    case 'alias-prefix':
      return `alias-prefix ${rule.from} -> ${rule.to}`;
    case 'drop-suffix':
      return `drop-suffix ${rule.suffix}`;
    case 'ignore-param':
      return `ignore-param ${rule.name} at ${rule.at}`;
    case 'alias-namespace':
      return `alias-namespace ${rule.dir}<n>`;
  }
}

/** Why a value read back from storage is not a rule. */
export class DuplicateUrlRuleError extends Error {
  readonly code = 'INVALID_DUPLICATE_URL_RULE';
  override readonly name = 'DuplicateUrlRuleError';
}

/** Checks a rule read back from JSON (rules.json, a snapshot, a cloud item); throws DuplicateUrlRuleError. */
export function checkRule(value: unknown): DuplicateUrlRule {
  const rule = value as Partial<Record<string, unknown>> | null;
  const fail = (why: string): never => {
    throw new DuplicateUrlRuleError(`not a duplicate-URL rule (${why}): ${JSON.stringify(value)}`);
  };
  if (typeof rule !== 'object' || rule === null) return fail('not an object');
  const directory = (s: unknown) => typeof s === 'string' && s.startsWith('/') && s.endsWith('/');
  switch (rule.kind) {
    case 'case-insensitive':
    case 'trailing-slash':
      return { kind: rule.kind };
    case 'alias-prefix':
      if (!directory(rule.from) || !directory(rule.to) || (rule.to as string).startsWith(rule.from as string))
        return fail('from and to must be paths that start and end with /, and to must not start with from');
      return { kind: 'alias-prefix', from: rule.from as string, to: rule.to as string };
    case 'drop-suffix':
      if (typeof rule.suffix !== 'string' || !segmentLike(rule.suffix))
        return fail('suffix must be one path segment');
      return { kind: 'drop-suffix', suffix: rule.suffix };
    case 'ignore-param':
      if (typeof rule.name !== 'string' || rule.name === '' || /[&=#?]/.test(rule.name))
        return fail('name must be a query parameter name');
      // a rule stored before parameter rules were scoped applied to the whole origin
      if (rule.at === undefined) return { kind: 'ignore-param', name: rule.name, at: '/*' };
      if (typeof rule.at !== 'string' || !rule.at.startsWith('/') || /[?#]/.test(rule.at))
        return fail('at must be a path, or a directory followed by *');
      return { kind: 'ignore-param', name: rule.name, at: rule.at };
    case 'alias-namespace':
      if (!directory(rule.dir) || rule.dir === '/')
        return fail('dir must be a path that starts and ends with /, not /');
      return { kind: 'alias-namespace', dir: rule.dir as string };
    default:
      return fail(`unknown kind ${JSON.stringify(rule.kind)}`);
  }
}

function segmentLike(s: string): boolean {
  return s !== '' && s !== '.' && s !== '..' && !/[/?#]/.test(s);
}

/** A canonical URL cut into origin (`http://host:port`), path, and query (without `?`; null when none). */
export interface UrlParts {
  origin: string;
  path: string;
  query: string | null;
}

/** Cuts a canonical absolute URL (no fragment) into its parts. */
export function splitUrl(url: string): UrlParts {
  const scheme = url.indexOf('//');
  let slash = url.indexOf('/', scheme + 2);
  if (slash < 0) slash = url.length;
  const q = url.indexOf('?', slash);
  return {
    origin: url.slice(0, slash),
    path: q < 0 ? url.slice(slash) || '/' : url.slice(slash, q) || '/',
    query: q < 0 ? null : url.slice(q + 1),
  };
}

function joinUrl(parts: UrlParts): string {
  return parts.query === null ? parts.origin + parts.path : `${parts.origin}${parts.path}?${parts.query}`;
}

/** The path with ASCII letters lowercased, except the hex digits of percent-escapes. */
export function lowerPath(path: string): string {
  if (path.indexOf('%') < 0) return path.toLowerCase();
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === '%' && i + 2 < path.length) {
      out += path.slice(i, i + 3);
      i += 2;
    } else {
      out += c.toLowerCase();
    }
  }
  return out;
}

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function paramName(part: string): string {
  const eq = part.indexOf('=');
  return eq < 0 ? part : part.slice(0, eq);
}

/** Applies one rule to the parts (a new object when it changes them, the same one otherwise). */
function applyToParts(rule: DuplicateUrlRule, parts: UrlParts): UrlParts {
  switch (rule.kind) {
    case 'case-insensitive': {
      const path = lowerPath(parts.path);
      return path === parts.path ? parts : { ...parts, path };
    }
    case 'alias-prefix':
      return parts.path.startsWith(rule.from)
        ? { ...parts, path: rule.to + parts.path.slice(rule.from.length) }
        : parts;
    case 'drop-suffix': {
      const { path } = parts;
      const cut = path.length - rule.suffix.length;
      return cut >= 1 && path.endsWith(rule.suffix) && path.charCodeAt(cut - 1) === 47
        ? { ...parts, path: path.slice(0, cut) }
        : parts;
    }
    case 'trailing-slash': {
      const last = lastSegment(parts.path);
      return last === '' || last.includes('.') || last.includes(';')
        ? parts
        : { ...parts, path: `${parts.path}/` };
    }
    case 'ignore-param': {
      if (parts.query === null || parts.query.indexOf(rule.name) < 0 || !pathIn(rule.at, parts.path))
        return parts;
      const kept = parts.query.split('&').filter((part) => paramName(part) !== rule.name);
      const query = kept.join('&');
      if (query === parts.query) return parts;
      return { ...parts, query: query === '' ? null : query };
    }
    case 'alias-namespace':
      return parts;
  }
}

/** True when `path` is `at`, or under it when `at` is a directory followed by `*`. */
export function pathIn(at: string, path: string): boolean {
  return at.endsWith('*') ? path.startsWith(at.slice(0, -1)) : path === at;
}

/**
 * The scope of a parameter rule that holds two scopes (paths, or directories followed by `*`): their
 * longest common directory followed by `*` (`/a/p` and `/a/q/r` -> `/a/*`; `/p` and `/q` -> `/*`).
 */
export function widerScope(a: string, b: string): string {
  const da = a.endsWith('*') ? a.slice(0, -1) : a.slice(0, a.lastIndexOf('/') + 1);
  const db = b.endsWith('*') ? b.slice(0, -1) : b.slice(0, b.lastIndexOf('/') + 1);
  let n = 0;
  while (n < da.length && n < db.length && da[n] === db[n]) n++;
  return `${da.slice(0, da.lastIndexOf('/', n - 1) + 1) || '/'}*`;
}

/** `<dir><digits>` without a query: the directory of a URL an alias namespace may hold, else undefined. */
export function namespaceDir(url: string): string | undefined {
  const { path, query } = splitUrl(url);
  if (query !== null) return undefined;
  const match = /^(\/(?:[^/]+\/)+)\d{1,12}$/.exec(path);
  return match === null ? undefined : match[1];
}

/** True when an alias-namespace rule holds `url`. */
export function inNamespace(rule: DuplicateUrlRule, url: string): boolean {
  return rule.kind === 'alias-namespace' && namespaceDir(url) === rule.dir;
}

/** What one rule makes of a canonical URL (the URL itself when the rule does not touch it). */
export function applyRule(rule: DuplicateUrlRule, url: string): string {
  const parts = splitUrl(url);
  const out = applyToParts(rule, parts);
  return out === parts ? url : joinUrl(out);
}

/** Sorts rules into the fixed composition order (a copy): by kind, longer alias prefixes first, then by key. */
export function sortRules(rules: readonly DuplicateUrlRule[]): DuplicateUrlRule[] {
  const rank = (r: DuplicateUrlRule) => RULE_KIND_ORDER.indexOf(r.kind);
  return [...rules].sort((a, b) => {
    if (a.kind !== b.kind) return rank(a) - rank(b);
    if (a.kind === 'alias-prefix' && b.kind === 'alias-prefix' && a.from.length !== b.from.length)
      return b.from.length - a.from.length;
    const ka = ruleKey(a);
    const kb = ruleKey(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}

/** A URL after a host's rules, with the rules that changed it (in the order they did). */
export interface RuleRewrite {
  url: string;
  rules: DuplicateUrlRule[];
}

/** Passes over the rules before giving up on a fixed point (two are enough for every rule set). */
const MAX_PASSES = 4;

/**
 * Rewrites a canonical URL by `rules`, which must be in {@link sortRules} order: each pass applies
 * every rule once in that order, and passes repeat until the URL stops changing, so the result is a
 * fixed point (idempotent) whatever the rules' interplay (an alias target with capitals under a
 * case rule).
 */
export function rewriteUrl(rules: readonly DuplicateUrlRule[], url: string): RuleRewrite {
  if (rules.length === 0) return { url, rules: [] };
  const start = splitUrl(url);
  let parts = start;
  const applied: DuplicateUrlRule[] = [];
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const before = parts;
    for (const rule of rules) {
      const next = applyToParts(rule, parts);
      if (next !== parts) {
        parts = next;
        if (!applied.includes(rule)) applied.push(rule);
      }
    }
    if (parts === before) break;
  }
  return parts === start ? { url, rules: [] } : { url: joinUrl(parts), rules: applied };
}

/**
 * The rules that could explain why two URLs of one origin have the same content, each one of a
 * kind: the paths differ only in case; by a trailing slash; by an index document; by a prefix
 * over a common tail of at least one named segment (`/en/a/b` and `/a/b`); or the queries differ
 * in exactly one parameter name. Paths and queries are compared separately, so a pair that differs
 * in both proposes rules that merge it only together with others (the learner checks).
 *
 * `target`: the URL the rules must lead to (a redirect's Location); alias prefixes then point
 * there, and rules that would rewrite the target itself are left out. Without it an alias points
 * to the shorter prefix (ties: the smaller), so both orders of a pair give the same rule.
 */
export function deriveRules(a: string, b: string, target?: string): DuplicateUrlRule[] {
  const pa = splitUrl(a);
  const pb = splitUrl(b);
  if (pa.origin !== pb.origin) return [];
  const out: DuplicateUrlRule[] = [];
  if (pa.path !== pb.path)
    out.push(...pathRules(pa.path, pb.path, target === undefined ? undefined : target === b));
  if (pa.query !== pb.query) {
    const name = differingParam(pa.query, pb.query);
    // scoped to the path both URLs share (to their common directory when the path rules differ)
    const at = pa.path === pb.path ? pa.path : widerScope(pa.path, pb.path);
    if (name !== undefined && !pa.path.endsWith('*')) out.push({ kind: 'ignore-param', name, at });
  }
  if (target === undefined) return out;
  const source = target === b ? a : b;
  return out.filter((rule) => applyRule(rule, target) === target && applyRule(rule, source) !== source);
}

/** `towardB`: an alias must rewrite a's prefix into b's (true), b's into a's (false), or the shorter wins (undefined). */
function pathRules(a: string, b: string, towardB: boolean | undefined): DuplicateUrlRule[] {
  const out: DuplicateUrlRule[] = [];
  if (lowerPath(a) === lowerPath(b)) return [{ kind: 'case-insensitive' }];
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  if (long === `${short}/` && !lastSegment(short).includes('.')) out.push({ kind: 'trailing-slash' });
  if (long.startsWith(short)) {
    // `/dir/` + `index.html`, or `/dir` + `/index.html` (merged together with the slash rule)
    const tail = short.endsWith('/') ? long.slice(short.length) : long.slice(short.length + 1);
    const ok = short.endsWith('/') || long.charCodeAt(short.length) === 47;
    if (ok && segmentLike(tail) && (INDEX_DOCUMENT_SET.has(tail) || /^[^.]+\.[A-Za-z0-9]{1,8}$/.test(tail))) {
      out.push({ kind: 'drop-suffix', suffix: tail });
    }
  }
  const alias = aliasPrefixes(a, b);
  if (alias !== undefined) {
    const [fromA, fromB] = alias;
    let from: string;
    let to: string;
    if (towardB === true) [from, to] = [fromA, fromB];
    else if (towardB === false) [from, to] = [fromB, fromA];
    else if (fromA.length !== fromB.length)
      [from, to] = fromA.length > fromB.length ? [fromA, fromB] : [fromB, fromA];
    else [from, to] = fromA > fromB ? [fromA, fromB] : [fromB, fromA];
    if (!to.startsWith(from)) out.push({ kind: 'alias-prefix', from, to });
  }
  return out;
}

/**
 * The differing leading directories of two paths with a common tail of whole segments, at least
 * one of them named (`/en/a/b.html`, `/a/b.html` -> [`/en/`, `/`]); undefined when there is none,
 * or when the prefixes differ only in case (the case rule's business).
 */
function aliasPrefixes(a: string, b: string): [string, string] | undefined {
  const sa = a.split('/');
  const sb = b.split('/');
  let common = 0;
  while (
    common < sa.length - 1 &&
    common < sb.length - 1 &&
    sa[sa.length - 1 - common] === sb[sb.length - 1 - common]
  )
    common++;
  // the common tail must hold a named segment, not just the empty one after a final slash
  let named = false;
  for (let i = 0; i < common; i++) if (sa[sa.length - 1 - i] !== '') named = true;
  if (!named) return undefined;
  const prefixA = `${sa.slice(0, sa.length - common).join('/')}/`;
  const prefixB = `${sb.slice(0, sb.length - common).join('/')}/`;
  if (prefixA === prefixB || lowerPath(prefixA) === lowerPath(prefixB)) return undefined;
  return [prefixA, prefixB];
}

/** The one parameter name whose values differ between two queries (present in one only, or other values). */
function differingParam(a: string | null, b: string | null): string | undefined {
  const count = new Map<string, number>();
  for (const part of a === null || a === '' ? [] : a.split('&')) count.set(part, (count.get(part) ?? 0) + 1);
  for (const part of b === null || b === '' ? [] : b.split('&')) count.set(part, (count.get(part) ?? 0) - 1);
  let name: string | undefined;
  for (const [part, n] of count) {
    if (n === 0) continue;
    const p = paramName(part);
    if (p === '' || (name !== undefined && name !== p)) return undefined;
    name = p;
  }
  return name;
}
