/**
 * Link generators: a URL pattern that keeps producing new URLs whose pages are near-duplicates
 * (session or sort parameters, faceted search, empty calendar days, "print" variants, soft error
 * pages). Counted per URL template (host + {@link urlTemplate}) from the pages actually fetched:
 *
 * - template rule: once a template has `minPages` (10) fetched pages of which at least
 *   `nearDuplicateShare` (80%) were near-duplicates of an earlier page, further URLs of that
 *   template are rejected;
 * - family rule: the same test over the children of one parent page with one template (its
 *   "siblings"), from `minSiblings` (5) fetched: one page that fans out into many URLs of one
 *   template whose pages turn out alike, caught before the template as a whole qualifies.
 *
 * Both rules only ever look at fetched pages, so they cost a few wasted fetches per pattern and
 * cannot fire on a template until its pages have been seen. Memory: at most `maxTemplates`
 * templates and `maxFamilies` families (LRU).
 */
import { LruMap } from './lru-map.ts';
import { type TrapFinding, TrapFindings } from './trap-findings.ts';
import { hostOf, urlShape } from './url-template.ts';

/** Settings of {@link LinkGeneratorDetector}. */
export interface LinkGeneratorOptions {
  /** Fetched pages a template needs before it can be judged (default 10). */
  minPages?: number;
  /** Share of near-duplicates among them that makes it a generator (default 0.8). */
  nearDuplicateShare?: number;
  /** Fetched siblings (same parent, same template) needed before a family is judged (default 5). */
  minSiblings?: number;
  /** Templates remembered (default 10,000). */
  maxTemplates?: number;
  /** Families remembered (default 10,000). */
  maxFamilies?: number;
}

/** A fetched page, as the detector needs it. */
export interface ObservedPage {
  /** Canonical URL. */
  url: string;
  /** The page that discovered it (its fingerprint or URL: any stable id, used as given). */
  parent?: string;
  /** Its SimHash was within the near-duplicate distance of an earlier page's (or an exact duplicate). */
  nearDuplicate: boolean;
}

/** Counts of one template or family. */
interface Tally {
  host: string;
  pages: number;
  nearDuplicates: number;
  generator: boolean;
}

/** One remembered template or family in a snapshot. */
export type TallyRow = [key: string, host: string, pages: number, nearDuplicates: number, generator: boolean];

/** The detector's state, JSON-safe, to persist with a checkpoint and restore on resume. */
export interface LinkGeneratorSnapshot {
  /** [host + template, host, pages, near-duplicates, generator], least recently used first. */
  templates: TallyRow[];
  /** [parent + " " + host + template, host, pages, near-duplicates, generator]. */
  families: TallyRow[];
  findings: TrapFinding[];
}

/** Rejects URLs of link generators with reason `link-generator`; see the module comment. */
export class LinkGeneratorDetector {
  readonly #minPages: number;
  readonly #share: number;
  readonly #minSiblings: number;
  readonly #templates: LruMap<string, Tally>;
  readonly #families: LruMap<string, Tally>;
  /** Generators per host: `check` parses no URL of a host that has none (nearly all). */
  readonly #generatorHosts = new Map<string, number>();
  readonly #findings: TrapFindings;

  constructor(options: LinkGeneratorOptions = {}, snapshot?: LinkGeneratorSnapshot) {
    this.#minPages = options.minPages ?? 10;
    this.#share = options.nearDuplicateShare ?? 0.8;
    this.#minSiblings = options.minSiblings ?? 5;
    const evicted = (_key: string, tally: Tally) => {
      if (tally.generator) this.#countHost(tally.host, -1);
    };
    this.#templates = new LruMap(options.maxTemplates ?? 10_000, evicted);
    this.#families = new LruMap(options.maxFamilies ?? 10_000, evicted);
    this.#findings = new TrapFindings(1000, 5, snapshot?.findings);
    for (const [map, rows] of [
      [this.#templates, snapshot?.templates ?? []],
      [this.#families, snapshot?.families ?? []],
    ] as const) {
      for (const [key, host, pages, nearDuplicates, generator] of rows) {
        map.set(key, { host, pages, nearDuplicates, generator });
        if (generator) this.#countHost(host, 1);
      }
    }
  }

  /** Counts a fetched page (an HTML page whose near-duplicate status is known). */
  observe(page: ObservedPage): void {
    const shape = urlShape(page.url);
    const pattern = shape.host + shape.template;
    this.#tally(this.#templates, pattern, page.nearDuplicate, this.#minPages, shape.host);
    if (page.parent !== undefined) {
      this.#tally(
        this.#families,
        `${page.parent} ${pattern}`,
        page.nearDuplicate,
        this.#minSiblings,
        shape.host,
      );
    }
  }

  /**
   * `'link-generator'` when the URL's template (or its family under `parent`) is a generator,
   * else undefined. Call it for each new link (without `parent`: the links of the page being
   * processed have no fetched siblings yet) and, with the task's parent, before fetching a queued
   * task, which also stops URLs queued before their pattern was recognized.
   */
  check(url: string, parent?: string): 'link-generator' | undefined {
    const host = hostOf(url);
    if (!this.#generatorHosts.has(host)) return undefined;
    const shape = urlShape(url);
    const pattern = host + shape.template;
    if (this.#templates.get(pattern)?.generator === true) {
      this.#findings.record('link-generator', pattern, url);
      return 'link-generator';
    }
    if (parent !== undefined && this.#families.get(`${parent} ${pattern}`)?.generator === true) {
      this.#findings.record('link-generator', `${pattern} (children of ${parent})`, url);
      return 'link-generator';
    }
    return undefined;
  }

  /** What was rejected, most URLs first. */
  report(): TrapFinding[] {
    return this.#findings.list();
  }

  snapshot(): LinkGeneratorSnapshot {
    const rows = (map: LruMap<string, Tally>) =>
      [...map.entries()].map(([key, t]): TallyRow => [key, t.host, t.pages, t.nearDuplicates, t.generator]);
    return {
      templates: rows(this.#templates),
      families: rows(this.#families),
      findings: this.#findings.list(),
    };
  }

  #tally(map: LruMap<string, Tally>, key: string, nearDuplicate: boolean, min: number, host: string): void {
    let tally = map.get(key);
    if (tally === undefined) {
      tally = { host, pages: 0, nearDuplicates: 0, generator: false };
      map.set(key, tally);
    }
    tally.pages++;
    if (nearDuplicate) tally.nearDuplicates++;
    if (!tally.generator && tally.pages >= min && tally.nearDuplicates >= this.#share * tally.pages) {
      tally.generator = true;
      this.#countHost(host, 1);
    }
  }

  #countHost(host: string, delta: number): void {
    const n = (this.#generatorHosts.get(host) ?? 0) + delta;
    if (n > 0) this.#generatorHosts.set(host, n);
    else this.#generatorHosts.delete(host);
  }
}
