/**
 * Soft 404s: servers that answer a missing page with 200 and an error or home page instead of
 * 404. Such a site turns every made-up URL (broken relative links, generated paths) into a
 * "page". The test (Bar-Yossef, Broder, Kumar and Tomkins 2004, "Sic transit gloria telae") asks
 * each site once for a URL that cannot exist and remembers the answer; a page that answers like
 * that probe is a soft 404:
 *
 * - the probe answered 2xx and the page answers 2xx with a text whose SimHash is within
 *   `maxDistance` (6) of the probe's, both computed without their quotes of their own URL's path
 *   and query (the token sequences, wherever they occur in order): error pages quote the path
 *   asked for, and on a small error page those few words move the SimHash as far as real pages
 *   are (docs/quality.md);
 * - or the probe was redirected (3xx) and the page redirects to the same place (every unknown URL
 *   sent to the home page or a login form).
 *
 * The site's root (`/`) is never a soft 404: on sites that serve their home page for every
 * unknown URL the probe looks exactly like it.
 */
import { LruMap } from './lru-map.ts';
import { hammingDistance, type Simhash, simhash } from './simhash.ts';
import { type TrapFinding, TrapFindings } from './trap-findings.ts';

/** How a probe or a page answered. */
export interface SiteAnswer {
  /** HTTP status; 0 when there was no answer (then nothing is compared). */
  status: number;
  /** Visible text of a 2xx HTML answer (`extractPage(..., { text: true }).text`). */
  text?: string;
  /** Canonical redirect target, for 3xx answers. */
  location?: string;
}

/** A site's probe answer as remembered: the text reduced to its SimHash. */
export interface ProbeAnswer {
  status: number;
  /** SimHash of the probe's text without the tokens of the probe's path. */
  simhash?: Simhash;
  location?: string;
}

/** Settings of {@link Soft404Detector}. */
export interface Soft404Options {
  /** Largest SimHash distance to the probe's that still counts as the same answer (default 6). */
  maxDistance?: number;
  /** Sites remembered, least recently used forgotten first (default 100,000). */
  maxSites?: number;
}

/** The detector's state, JSON-safe, to persist with a checkpoint and restore on resume. */
export interface Soft404Snapshot {
  /** [origin, probe answer], least recently used first. */
  probes: [string, ProbeAnswer][];
  findings: TrapFinding[];
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A path that no site has: `/crawlstack-probe-<12 random letters and digits>.html`. No common
 * words in it: the comparison drops the path's words from the texts (a `-does-not-exist` would
 * take "not" out of "could not be found").
 * @param random returns numbers in [0, 1), like Math.random (passed in: the core draws no randomness)
 */
export function soft404ProbePath(random: () => number): string {
  let id = '';
  for (let i = 0; i < 12; i++) id += ALPHABET[Math.floor(random() * ALPHABET.length) % ALPHABET.length];
  return `/crawlstack-probe-${id}.html`;
}

/** Remembers each site's probe answer and recognizes soft-404 pages (reason `soft-404`). */
export class Soft404Detector {
  readonly #maxDistance: number;
  readonly #probes: LruMap<string, ProbeAnswer>;
  readonly #findings: TrapFindings;

  constructor(options: Soft404Options = {}, snapshot?: Soft404Snapshot) {
    this.#maxDistance = options.maxDistance ?? 6;
    this.#probes = new LruMap(options.maxSites ?? 100_000);
    this.#findings = new TrapFindings(1000, 5, snapshot?.findings);
    for (const [origin, answer] of snapshot?.probes ?? []) this.#probes.set(origin, { ...answer });
  }

  /** True when the site (`scheme://host[:port]`) has not been probed yet (or was forgotten). */
  needsProbe(origin: string): boolean {
    return this.#probes.peek(origin) === undefined;
  }

  /**
   * True when pages of this URL's site must bring their text to {@link isSoft404}: its probe
   * answered 2xx. Other sites' pages need no text (extracting it costs 12-32% more parse time).
   */
  needsText(url: string): boolean {
    const origin = URL.parse(url)?.origin;
    const probe = origin === undefined ? undefined : this.#probes.peek(origin);
    return probe !== undefined && isSuccess(probe.status);
  }

  /**
   * Records the answer to a site's probe (status 0 when the probe could not be made, e.g.
   * disallowed by robots.txt: the site is then trusted).
   * @param probeUrl the probe's absolute URL (its origin names the site)
   */
  recordProbe(probeUrl: string, answer: SiteAnswer): void {
    const url = new URL(probeUrl);
    this.#probes.set(url.origin, reduce(url, answer));
  }

  /**
   * Puts back a site's probe answer recorded elsewhere: a resumed crawl's state, or the cloud's
   * host item (a container that forgot the crawl does not probe the site again).
   */
  restoreProbe(origin: string, answer: ProbeAnswer): void {
    this.#probes.set(origin, { ...answer });
  }

  /** The site's probe answer, if recorded. */
  probeOf(origin: string): ProbeAnswer | undefined {
    const answer = this.#probes.peek(origin);
    return answer === undefined ? undefined : { ...answer };
  }

  /**
   * True when the page at `url` answered like its site's probe (see the module comment). False
   * when the site has no probe answer yet.
   * @param url canonical absolute URL of the page
   */
  isSoft404(url: string, page: SiteAnswer): boolean {
    const parsed = URL.parse(url);
    if (parsed === null || parsed.pathname === '/') return false;
    const probe = this.#probes.get(parsed.origin);
    if (probe === undefined || !sameAnswer(probe, parsed, page, this.#maxDistance)) return false;
    this.#findings.record('soft-404', parsed.host, url);
    return true;
  }

  /** Soft 404s found, per site, most first. */
  report(): TrapFinding[] {
    return this.#findings.list();
  }

  snapshot(): Soft404Snapshot {
    return {
      probes: [...this.#probes.entries()].map(([origin, answer]) => [origin, { ...answer }]),
      findings: this.#findings.list(),
    };
  }
}

/** SimHash of a text without its quotes of the URL's path and query (decoded or not). */
function pageSimhash(url: URL, text: string): Simhash {
  const quoted = [url.pathname, url.search];
  for (const part of [url.pathname, url.search]) {
    try {
      const decoded = decodeURIComponent(part.replaceAll('+', ' '));
      if (decoded !== part) quoted.push(decoded);
    } catch {
      // a malformed escape: the raw form will do
    }
  }
  return simhash(text, { skip: quoted });
}

function reduce(url: URL, answer: SiteAnswer): ProbeAnswer {
  const probe: ProbeAnswer = { status: answer.status };
  if (isSuccess(answer.status) && answer.text !== undefined) probe.simhash = pageSimhash(url, answer.text);
  if (answer.location !== undefined) probe.location = answer.location;
  return probe;
}

function sameAnswer(probe: ProbeAnswer, url: URL, page: SiteAnswer, maxDistance: number): boolean {
  if (isSuccess(probe.status) && isSuccess(page.status)) {
    return (
      probe.simhash !== undefined &&
      page.text !== undefined &&
      hammingDistance(probe.simhash, pageSimhash(url, page.text)) <= maxDistance
    );
  }
  if (isRedirect(probe.status) && isRedirect(page.status)) {
    return probe.location !== undefined && probe.location === page.location;
  }
  return false;
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}
