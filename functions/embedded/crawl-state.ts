/**
 * Opening an embedded crawl: the state file, the output files cut back to their committed sizes,
 * the checkpoint's counters and AOPIC ledger, the detectors' saved state, the robots.txt cache and
 * the fetcher, all ready before the first step; and closing them in order. Everything an open
 * crawl holds is assigned here, once.
 */

import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BodyBudget, EMBEDDED_LARGE_BODIES, STEP_COST_PER_BYTE } from '../adapters/http/body-budget.ts';
import { UndiciFetcher } from '../adapters/http/undici-fetcher.ts';
import { CrawlDb } from '../adapters/local/crawl-db.ts';
import {
  LocalNearDuplicateIndex,
  NearDuplicateLayoutError,
} from '../adapters/local/local-near-duplicate-index.ts';
import { LocalRobotsCache } from '../adapters/local/local-robots-cache.ts';
import { LocalWarcPageStore, type WarcPosition } from '../adapters/local/warc-page-store.ts';
import type { CrawlConfig } from '../core/config.ts';
import type { Fetcher, PageStore } from '../core/ports.ts';
import { CrawlQuality, type QualitySnapshot } from '../core/quality/crawl-quality.ts';
import { DuplicateUrlRuleError } from '../core/quality/duplicate-url-rule.ts';
import { DuplicateUrlRules, type DuplicateUrlRulesSnapshot } from '../core/quality/duplicate-url-rules.ts';
import { AopicLedger, type AopicState } from '../core/scheduling/aopic.ts';
import { seedTasks } from '../core/step/crawl-page.ts';
import { isErrorReason } from '../core/step/page-record.ts';
import { safeJson } from '../core/text/safe-text.ts';
import type { CrawlTask, Fingerprint } from '../core/types.ts';
import { UrlCanonicalizer } from '../core/url/canonicalize.ts';
import { ScopeRules } from '../core/url/scope.ts';
import { ClockCache } from '../core/url-seen/clock-cache.ts';
import { AopicDispatchPolicy } from './aopic-dispatch-policy.ts';
import { AppendOnlyFile } from './append-only-file.ts';
import { type CrawlCounters, restoreCounters } from './crawl-counters.ts';
import { CrawlFolderError, storageFailure } from './crawl-errors.ts';
import { InflightLog } from './inflight-log.ts';
import { JsonlFile } from './jsonl-file.ts';
import { fixedSettingChange, reasonsToRetry } from './resume-rules.ts';
import { type Lesson, replayLessons } from './step-quality.ts';

/** What each step's commit records with it, and a resumed crawl starts from. */
export interface Checkpoint {
  pagesSize: number;
  linksSize: number;
  sitemapsSize?: number;
  warc: WarcPosition | null;
  counters: CrawlCounters;
  /** Hosts that seeds redirected to: they joined the scope, and must stay in it after a restart. */
  scopeHosts?: string[];
  /** AOPIC ledger: the lambda page, the redistribution bonus, totals. */
  aopic?: AopicState;
  /** Committed size of url-seen.trace. */
  traceSize?: number;
  /** Committed size of dataset.jsonl. */
  datasetSize?: number;
}

/** The output folder holds another crawl than the one asked for. */
export class CrawlStateMismatchError extends Error {
  override readonly name = 'CrawlStateMismatchError';
  readonly code = 'CRAWL_STATE_MISMATCH';
}

/** Who holds a crawl folder: written once its state is open (SQLite's exclusive lock is the lock). */
interface FolderHolder {
  pid: number;
  host: string;
  startedAt: string;
}

const HOLDER_FILE = 'crawl.pid';

/** What opening a crawl needs from its runner. */
export interface OpenOptions {
  config: CrawlConfig;
  outDir: string;
  now: number;
  random: () => number;
  /** Write WARC files (default true). */
  warc?: boolean;
  /** A fetcher to use instead of the crawl's own UndiciFetcher (not closed with the crawl). */
  fetcher?: Fetcher;
  log: (line: string) => void;
  /**
   * What a fresh folder is seeded with instead of the seeds' tasks (a recrawl round: the pages it
   * revisits, and the known pages it leaves out, which enter the seen set unqueued).
   */
  seedPlan?: SeedPlan;
}

/** A recrawl round's start: tasks to queue (crawlId is set here), and URLs known but not queued. */
export interface SeedPlan {
  tasks: Omit<CrawlTask, 'crawlId'>[];
  known: Fingerprint[];
}

/** The crawl's identity in its state file (a folder holds one crawl), and its last run's settings. */
interface StoredCrawl {
  seeds: string[];
  scope: string;
  crawlId: string;
  settings?: Partial<CrawlConfig>;
}

/** What `saveQuality` stores: the detectors' state and the hosts' duplicate-URL rules, saved together. */
type SavedQuality = QualitySnapshot & { duplicateUrlRules?: DuplicateUrlRulesSnapshot };

/** A page store that keeps nothing (`--no-warc`). */
const NO_WARC: PageStore = { put: async () => undefined, flush: async () => {} };

/** An open crawl: its state, outputs, rules and defences. */
export class CrawlState {
  readonly config: CrawlConfig;
  readonly outDir: string;
  readonly db: CrawlDb;
  readonly pagesFile: JsonlFile;
  readonly linksFile: JsonlFile;
  /** The sitemaps each robots.txt names, one line per fetch that named some. */
  readonly sitemapsFile: JsonlFile;
  /** The URL-seen trace (`seenTrace`): 8 bytes per look-up, appended with each step's commit. */
  readonly traceFile: AppendOnlyFile | undefined;
  /** Rows of the `extract` fields, one per page they were pulled from (crawls with fields only). */
  readonly datasetFile: JsonlFile | undefined;
  readonly warc: LocalWarcPageStore | undefined;
  /** WARC files, or a store that keeps nothing. */
  readonly pages: PageStore;
  readonly counters: CrawlCounters;
  readonly canonicalizer: UrlCanonicalizer;
  readonly scope: ScopeRules;
  readonly scopeHosts: Set<string>;
  readonly seenCache: ClockCache;
  readonly robots: LocalRobotsCache;
  readonly policy: AopicDispatchPolicy;
  readonly quality: CrawlQuality;
  /** The hosts' duplicate-URL rules, learned and applied (undefined with `duplicateUrlRules` off). */
  readonly urlRules: DuplicateUrlRules | undefined;
  readonly nearIndex: LocalNearDuplicateIndex | undefined;
  readonly fetcher: Fetcher;
  readonly resumed: boolean;
  /** Steps in flight, so that a run that dies on a page knows it next time. */
  readonly inflight: InflightLog;
  /** URLs in flight when an earlier run died, with how many runs died on them. */
  readonly crashes: ReadonlyMap<Fingerprint, number>;
  /** Crawl time of earlier runs, ms. */
  readonly elapsedBefore: number;
  readonly #ownsFetcher: boolean;

  private constructor(
    parts: Omit<CrawlState, 'checkpoint' | 'saveQuality' | 'close' | 'abandon'> & { ownsFetcher: boolean },
  ) {
    this.config = parts.config;
    this.outDir = parts.outDir;
    this.db = parts.db;
    this.pagesFile = parts.pagesFile;
    this.linksFile = parts.linksFile;
    this.sitemapsFile = parts.sitemapsFile;
    this.traceFile = parts.traceFile;
    this.datasetFile = parts.datasetFile;
    this.warc = parts.warc;
    this.pages = parts.pages;
    this.counters = parts.counters;
    this.canonicalizer = parts.canonicalizer;
    this.scope = parts.scope;
    this.scopeHosts = parts.scopeHosts;
    this.seenCache = parts.seenCache;
    this.robots = parts.robots;
    this.policy = parts.policy;
    this.quality = parts.quality;
    this.urlRules = parts.urlRules;
    this.nearIndex = parts.nearIndex;
    this.fetcher = parts.fetcher;
    this.resumed = parts.resumed;
    this.inflight = parts.inflight;
    this.crashes = parts.crashes;
    this.elapsedBefore = parts.elapsedBefore;
    this.#ownsFetcher = parts.ownsFetcher;
  }

  /**
   * Opens the crawl in `outDir`, resuming it when the folder holds the same crawl (same seeds and
   * scope), seeding it when the folder is new.
   * @throws CrawlStateMismatchError when the folder holds another crawl.
   */
  static async open(options: OpenOptions): Promise<CrawlState> {
    const { config, outDir } = options;
    prepareFolder(outDir);
    const db = openState(outDir);
    writeFileSync(
      join(outDir, HOLDER_FILE),
      `${JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date(options.now).toISOString() } satisfies FolderHolder)}\n`,
    );
    const identity = { seeds: config.seeds, scope: config.scope };
    const stored = db.getMeta<StoredCrawl>('crawl');
    const checkpoint = db.getMeta<Checkpoint>('checkpoint');
    if (
      stored !== undefined &&
      JSON.stringify({ seeds: stored.seeds, scope: stored.scope }) !== JSON.stringify(identity)
    ) {
      db.close();
      throw new CrawlStateMismatchError(
        `${outDir} holds another crawl (seeds ${stored.seeds.join(' ')}, scope ${stored.scope}); ` +
          'choose another --out folder to start a new crawl, or run the same seeds and scope to resume it',
      );
    }
    const change = stored?.settings === undefined ? undefined : fixedSettingChange(stored.settings, config);
    if (change !== undefined) {
      db.close();
      throw new CrawlStateMismatchError(
        `${outDir}: ${change}; run it with the same value, or choose another --out folder`,
      );
    }
    const ledger = new AopicLedger(checkpoint?.aopic);
    const policy = new AopicDispatchPolicy(config, ledger, options.now);
    db.prioritize = policy.prioritize;
    const canonicalizer = new UrlCanonicalizer(config);
    const scope = new ScopeRules(config, seedUrls(config, canonicalizer));
    const scopeHosts = new Set<string>(checkpoint?.scopeHosts ?? []);
    for (const host of scopeHosts) scope.allowHost(host);
    const counters = restoreCounters(checkpoint?.counters);
    let nearIndex: LocalNearDuplicateIndex | undefined;
    try {
      nearIndex =
        config.nearDuplicateDistance > 0
          ? new LocalNearDuplicateIndex(db.database, { k: config.nearDuplicateDistance })
          : undefined;
    } catch (error) {
      db.close();
      if (!(error instanceof NearDuplicateLayoutError)) throw error;
      throw new CrawlStateMismatchError(
        `${outDir}: ${error.message}; nearDuplicateDistance cannot change for a crawl: run it with the same value, or choose another --out folder`,
        { cause: error },
      );
    }
    const saved = db.getMeta<SavedQuality>('quality') ?? {};
    const quality = new CrawlQuality(
      config,
      { ...(nearIndex ? { index: nearIndex } : {}), random: options.random },
      saved,
    );
    const urlRules = config.duplicateUrlRules ? openUrlRules(config, saved, options.log) : undefined;
    let warc: LocalWarcPageStore | undefined;
    if (options.warc !== false) {
      const warcOptions: Parameters<typeof LocalWarcPageStore.open>[1] = {
        warcinfo: { 'crawl-seeds': config.seeds.join(' '), 'user-agent': config.userAgent },
      };
      if (checkpoint?.warc) warcOptions.resumeAt = checkpoint.warc;
      warc = LocalWarcPageStore.open(join(outDir, 'warc'), warcOptions);
    }
    const { log: inflight, previous } = InflightLog.open(join(outDir, 'inflight.log'));
    const crashes = new Map(Object.entries(db.getMeta<Record<Fingerprint, number>>('crashes') ?? {}));
    const died = [...previous].filter((fp) => db.isQueued(fp));
    if (died.length > 0) {
      for (const fp of died) crashes.set(fp, (crashes.get(fp) ?? 0) + 1);
      db.setMeta('crashes', Object.fromEntries(crashes));
    }
    const state = new CrawlState({
      config,
      outDir,
      db,
      pagesFile: new JsonlFile(join(outDir, 'pages.jsonl'), checkpoint?.pagesSize ?? 0),
      linksFile: new JsonlFile(join(outDir, 'links.jsonl'), checkpoint?.linksSize ?? 0),
      sitemapsFile: new JsonlFile(join(outDir, 'sitemaps.jsonl'), checkpoint?.sitemapsSize ?? 0),
      traceFile: config.seenTrace
        ? new AppendOnlyFile(join(outDir, 'url-seen.trace'), checkpoint?.traceSize ?? 0)
        : undefined,
      datasetFile:
        Object.keys(config.extract).length > 0
          ? new JsonlFile(join(outDir, 'dataset.jsonl'), checkpoint?.datasetSize ?? 0)
          : undefined,
      warc,
      pages: warc ?? NO_WARC,
      counters,
      canonicalizer,
      scope,
      scopeHosts,
      seenCache: new ClockCache(config.seenCacheSize),
      robots: new LocalRobotsCache(db),
      policy,
      quality,
      urlRules,
      nearIndex,
      fetcher:
        options.fetcher ??
        new UndiciFetcher({
          ...config,
          // Bodies past the threshold take turns (docs/safety.md, "Memory per body").
          bodyBudget: new BodyBudget({
            budgetBytes: EMBEDDED_LARGE_BODIES * STEP_COST_PER_BYTE * config.maxBodyBytes,
            costPerByte: STEP_COST_PER_BYTE,
          }),
        }),
      ownsFetcher: options.fetcher === undefined,
      resumed: stored !== undefined,
      inflight,
      crashes,
      elapsedBefore: counters.elapsedMs,
    });
    if (stored === undefined) {
      const crawlId = randomUUID();
      db.setMeta('crawl', { ...identity, crawlId, settings: config } satisfies StoredCrawl);
      const plan = options.seedPlan;
      const tasks =
        plan === undefined
          ? seedTasks(crawlId, config.seeds, canonicalizer).tasks
          : plan.tasks.map((task) => ({ ...task, crawlId }));
      counters.discovered += tasks.length;
      ledger.discovered(tasks.length);
      db.seed(tasks, state.checkpoint(), plan?.known);
    } else {
      // The detectors' saved state, then what the steps committed since taught them.
      await replayLessons(quality, db.qualityLog() as Lesson[][], urlRules);
      state.#retryFailed(stored.settings, options.log);
      db.setMeta('crawl', { ...stored, settings: config } satisfies StoredCrawl);
    }
    return state;
  }

  /**
   * Queues again the URLs that failed for a reason this run removes (see resume-rules.ts); they
   * leave the counters, and their new outcome is appended to pages.jsonl after the old one.
   */
  #retryFailed(previous: Partial<CrawlConfig> | undefined, log: (line: string) => void): void {
    const why = reasonsToRetry(previous, this.config, this.counters.fetched);
    const counts = this.db.failedCounts(why.keys());
    if (counts.size === 0) return;
    const c = this.counters;
    for (const [reason, n] of counts) {
      c.finished -= n;
      if (isErrorReason(reason)) c.failed -= n;
      c.byReason[reason] = (c.byReason[reason] ?? n) - n;
      if (c.byReason[reason] === 0) delete c.byReason[reason];
      c.byStatus.none = (c.byStatus.none ?? n) - n;
      if (c.byStatus.none === 0) delete c.byStatus.none;
    }
    // Each gets back the cash it held when it failed (it went to the lambda page then), so a
    // recovered crawl ranks its pages by AOPIC again instead of all at importance 0.
    const ledger = this.policy.ledger;
    const tasks = this.db.requeueFailed(
      counts.keys(),
      (failed) => ledger.reclaim(failed.cash),
      () => this.checkpoint(),
    );
    const detail = [...counts].map(([reason, n]) => `${n} ${reason} (${why.get(reason)})`).join(', ');
    log(`retrying ${tasks.length} URLs that failed before: ${detail}`);
  }

  /** The checkpoint as of now: output sizes, counters, scope, ledger. */
  checkpoint(): Checkpoint {
    return {
      pagesSize: this.pagesFile.size,
      linksSize: this.linksFile.size,
      sitemapsSize: this.sitemapsFile.size,
      warc: this.warc?.position() ?? null,
      counters: this.counters,
      scopeHosts: [...this.scopeHosts],
      aopic: this.policy.ledger.state,
      ...(this.traceFile ? { traceSize: this.traceFile.size } : {}),
      ...(this.datasetFile ? { datasetSize: this.datasetFile.size } : {}),
    };
  }

  /**
   * Saves the detectors' state and merges the near-duplicate index's waiting adds, every few
   * hundred steps (a resumed crawl replays the lessons of the steps committed since).
   */
  saveQuality(): void {
    const snapshot: SavedQuality = this.quality.snapshot();
    if (this.urlRules !== undefined) snapshot.duplicateUrlRules = this.urlRules.snapshot();
    this.db.saveQuality(snapshot, () => this.nearIndex?.flush());
  }

  /**
   * Closes everything without writing: after a storage failure, the last committed step is what a
   * resumed crawl starts from (output files past their committed sizes are cut back then).
   */
  async abandon(): Promise<void> {
    for (const close of [
      // The steps dropped were not crashes: they are fetched again without counting.
      () => this.inflight.close(),
      () => this.pagesFile.close(),
      () => this.linksFile.close(),
      () => this.sitemapsFile.close(),
      () => this.traceFile?.close(),
      () => this.datasetFile?.close(),
      () => this.warc?.close(),
      () => this.db.abandon(),
    ]) {
      try {
        close();
      } catch {
        // already closed, or the disk refuses even this: the process ends soon anyway
      }
    }
    if (this.#ownsFetcher) await this.fetcher.close();
  }

  /** Applies what waits in memory, writes the last checkpoint and the traps report, closes the files. */
  async close(): Promise<void> {
    try {
      this.policy.flush(this.db);
      this.saveQuality();
      this.db.setMeta('checkpoint', this.checkpoint());
      writeFileSync(join(this.outDir, 'traps.json'), `${safeJson(this.quality.report(), 2)}\n`);
      if (this.urlRules !== undefined) {
        writeFileSync(join(this.outDir, RULES_FILE), `${safeJson(this.urlRules.report(), 2)}\n`);
      }
      this.nearIndex?.close();
      this.inflight.close();
      this.pagesFile.close();
      this.linksFile.close();
      this.sitemapsFile.close();
      this.traceFile?.close();
      this.datasetFile?.close();
      this.warc?.close();
      this.db.close();
    } finally {
      if (this.#ownsFetcher) await this.fetcher.close();
    }
  }
}

/** The hosts' duplicate-URL rules, written beside traps.json when the crawl closes. */
export const RULES_FILE = 'rules.json';

/**
 * The duplicate-URL learner, with what the last save held. A saved state this version cannot
 * read is dropped with a log line: the rules are learned again from the pages still to come.
 */
function openUrlRules(
  config: CrawlConfig,
  saved: SavedQuality,
  log: (line: string) => void,
): DuplicateUrlRules {
  const options = { minSupport: config.duplicateUrlRuleSupport, auditShare: config.duplicateUrlRuleAudit };
  try {
    return new DuplicateUrlRules(options, saved.duplicateUrlRules);
  } catch (error) {
    if (!(error instanceof DuplicateUrlRuleError)) throw error;
    log(`duplicate-URL rules: the saved state is unreadable (${error.message}); learning them again`);
    return new DuplicateUrlRules(options);
  }
}

/** Creates the output folder, or checks that the one given is a folder. */
function prepareFolder(outDir: string): void {
  const existing = statSync(outDir, { throwIfNoEntry: false });
  if (existing !== undefined && !existing.isDirectory()) {
    throw new CrawlFolderError(
      'CRAWL_FOLDER_NOT_A_FOLDER',
      `--out ${outDir} is a file, not a folder; give a folder (it is created when missing)`,
    );
  }
  try {
    mkdirSync(outDir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'EEXIST') {
      throw new CrawlFolderError(
        'CRAWL_FOLDER_NOT_A_FOLDER',
        `--out ${outDir}: part of that path is a file, not a folder; give another folder`,
        { cause: error },
      );
    }
    throw new CrawlFolderError(
      'CRAWL_FOLDER_UNUSABLE',
      `--out ${outDir} cannot be created (${code ?? error})`,
      {
        cause: error,
      },
    );
  }
}

/** Opens the state file; a folder another crawl holds is refused, naming the process. */
function openState(outDir: string): CrawlDb {
  try {
    return new CrawlDb(join(outDir, 'state.sqlite'));
  } catch (error) {
    const e = error as { code?: string; errcode?: number };
    if (e.code === 'ERR_SQLITE_ERROR' && ((e.errcode ?? 0) & 0xff) === SQLITE_BUSY) {
      throw new CrawlFolderError(
        'CRAWL_FOLDER_BUSY',
        `${outDir} is in use by another crawl (${describeHolder(outDir)}); wait for it to end, or give another --out`,
        { cause: error },
      );
    }
    throw storageFailure(error, outDir) ?? error;
  }
}

const SQLITE_BUSY = 5;

function describeHolder(outDir: string): string {
  try {
    const holder = JSON.parse(readFileSync(join(outDir, HOLDER_FILE), 'utf8')) as FolderHolder;
    return `crawlstack process ${holder.pid} on ${holder.host}, started ${holder.startedAt}`;
  } catch {
    return 'another process';
  }
}

function seedUrls(config: CrawlConfig, canonicalizer: UrlCanonicalizer): string[] {
  const urls: string[] = [];
  for (const seed of config.seeds) {
    const canonical = canonicalizer.canonicalize(seed);
    if (canonical.ok) urls.push(canonical.url);
  }
  return urls;
}
