/**
 * In-memory implementations of the cloud ports, with the semantics the AWS adapters' contracts
 * state (owner-conditional claims, the host ledger's conditional count, FIFO-ish sends), so the
 * worker's phases, the scheduler and the API run in unit tests without the emulator. Values are
 * copied in and out, as across a network.
 */

import { IDLE_GROUP, turnsOf } from '../../../functions/cloud/frontier/back-queues.ts';
import type { ApiDeps } from '../../../functions/cloud/lambdas/api/api-app.ts';
import type { ArchiveEntry, ArchiveRounds } from '../../../functions/cloud/messages/archive-records.ts';
import {
  addHostCounts,
  aggregateCounters,
  type CloudAopicState,
  type CompletionWatch,
  type CounterShard,
  type CrawlCounters,
  type CrawlRecord,
  type CrawlStatus,
  emptyHostCounts,
  type HostGroup,
  type HostRecord,
  sequenceKey,
} from '../../../functions/cloud/messages/crawl-records.ts';
import { isTraceBody } from '../../../functions/cloud/messages/trace-message.ts';
import type {
  ArchiveStore,
  BacklogTurn,
  BatchState,
  BatchStateRequest,
  CaptureSink,
  ClaimOptions,
  CrawlDispatch,
  CrawlStores,
  CrawlTableStore,
  DeadLetter,
  DeadLetterSink,
  FrontierReceiver,
  HostBacklog,
  HostRulesWrite,
  HostUpdate,
  HostUpdateResult,
  MessageVisibility,
  ObjectLinks,
  ObjectReader,
  ObjectStore,
  OwnedSeenStore,
  ParkedUrl,
  ParkedUrls,
  ReceivedMessage,
  StoredHostRules,
  StoredObject,
  VisibilityChange,
  WarmRobotsCache,
} from '../../../functions/cloud/ports/cloud-ports.ts';
import {
  ADMISSION_CLAIM_MS,
  type CheckedContentSeenStore,
  emptyBatchState,
  rulesNewsSlot,
  stateKey,
} from '../../../functions/cloud/ports/cloud-ports.ts';
import type { Clock, Frontier, RobotsEntry } from '../../../functions/core/ports.ts';
import type {
  HeldForm,
  HostRuleRecord,
  RuleRecord,
} from '../../../functions/core/quality/duplicate-url-rules.ts';
import type { ArchivedPage } from '../../../functions/core/recrawl/archived-page.ts';
import type { CrawlTask, Fingerprint } from '../../../functions/core/types.ts';

const copy = <T>(value: T): T => structuredClone(value);

/** CrawlTable in memory: crawl items, registry, budgets, host ledgers, robots entries. */
export class MemoryCrawlTable implements CrawlTableStore {
  readonly crawls = new Map<string, CrawlRecord>();
  readonly registry = new Set<string>();
  readonly budgets = new Map<string, number>();
  readonly dispatch = new Map<string, CrawlDispatch>();
  readonly hostItems = new Map<string, HostRecord>();
  readonly robots = new Map<string, RobotsEntry>();
  /** Duplicate-URL rules per crawl and host, with their versions. */
  readonly rules = new Map<string, StoredHostRules>();
  /** Calls by method name (to assert what a use case read). */
  readonly calls: string[] = [];
  /** Makes the next calls of a method throw. */
  failing = new Set<string>();

  #call(name: string): void {
    this.calls.push(name);
    if (this.failing.has(name)) throw new Error(`${name} failed (test)`);
  }

  async createCrawl(crawl: CrawlRecord): Promise<void> {
    this.#call('createCrawl');
    if (this.crawls.has(crawl.id)) throw new Error(`crawl ${crawl.id} exists`);
    this.crawls.set(crawl.id, copy(crawl));
    this.registry.add(crawl.id);
  }
  async getCrawl(id: string): Promise<CrawlRecord | undefined> {
    this.#call('getCrawl');
    const crawl = this.crawls.get(id);
    return crawl === undefined ? undefined : copy(crawl);
  }
  async cancelCrawl(id: string): Promise<CrawlStatus | undefined> {
    this.#call('cancelCrawl');
    const crawl = this.crawls.get(id);
    if (crawl === undefined) return undefined;
    if (crawl.status === 'running') crawl.status = 'cancelled';
    return crawl.status;
  }
  async finishCrawl(
    id: string,
    end: { status: 'done' | 'failed'; finishedAt: string; counters: CrawlCounters; lost: number },
  ): Promise<void> {
    this.#call('finishCrawl');
    const crawl = this.crawls.get(id);
    if (crawl !== undefined) {
      if (crawl.status === 'running') crawl.status = end.status;
      crawl.finishedAt ??= end.finishedAt;
      crawl.counters = copy(end.counters);
      crawl.lost = end.lost;
    }
    this.registry.delete(id);
  }
  async listCrawls(
    limit: number,
    after?: string,
  ): Promise<{ crawls: CrawlRecord[]; next?: string } | undefined> {
    this.#call('listCrawls');
    const all = [...this.crawls.values()].sort((a, b) => (a.createdAt + a.id < b.createdAt + b.id ? 1 : -1));
    const keys = all.map((c) => `${c.createdAt}#${c.id}`);
    const start = after === undefined ? 0 : keys.indexOf(after) + 1;
    if (after !== undefined && start === 0) return undefined;
    const page = all.slice(start, start + limit).map(copy);
    const next = start + limit < all.length ? keys[start + limit - 1] : undefined;
    return next === undefined ? { crawls: page } : { crawls: page, next };
  }
  async registeredCrawls(): Promise<string[]> {
    this.#call('registeredCrawls');
    return [...this.registry];
  }
  async setWatch(id: string, watch: CompletionWatch | undefined): Promise<void> {
    this.#call('setWatch');
    const crawl = this.crawls.get(id);
    if (crawl === undefined) return;
    if (watch === undefined) delete crawl.watch;
    else crawl.watch = copy(watch);
  }
  async setAopic(id: string, aopic: CloudAopicState): Promise<void> {
    this.#call('setAopic');
    const crawl = this.crawls.get(id);
    if (crawl !== undefined) crawl.aopic = { ...copy(aopic), admitted: crawl.aopic?.admitted ?? 0 };
  }
  async addAdmitted(id: string, admitted: number): Promise<void> {
    this.#call('addAdmitted');
    const crawl = this.crawls.get(id);
    if (crawl === undefined) return;
    const aopic = crawl.aopic ?? { bonus: 0, lambdaSpent: 0, admitted: 0, history: 0, fetched: 0 };
    crawl.aopic = { ...aopic, admitted: aopic.admitted + admitted };
  }
  async hosts(crawlId: string): Promise<HostRecord[]> {
    this.#call('hosts');
    return [...this.hostItems.entries()].filter(([k]) => k.startsWith(`${crawlId} `)).map(([, h]) => copy(h));
  }
  async someHosts(crawlId: string, limit: number): Promise<HostRecord[]> {
    this.#call('someHosts');
    return [...this.hostItems.entries()]
      .filter(([k]) => k.startsWith(`${crawlId} `))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit)
      .map(([, h]) => copy(h));
  }
  async doneSeqs(crawlId: string, hosts: readonly string[]): Promise<Map<string, string>> {
    this.#call('doneSeqs');
    const out = new Map<string, string>();
    for (const host of hosts) {
      const seq = this.hostItems.get(stateKey(crawlId, host))?.doneSeq;
      if (seq !== undefined) out.set(host, seq);
    }
    return out;
  }
  async loadBatchState(request: BatchStateRequest): Promise<BatchState> {
    this.#call('loadBatchState');
    const state = emptyBatchState();
    for (const id of request.crawlIds) {
      const crawl = this.crawls.get(id);
      if (crawl !== undefined) state.crawls.set(id, copy(crawl));
    }
    for (const id of request.budgets) {
      const budget = this.budgets.get(id);
      if (budget !== undefined) state.budgets.set(id, budget);
      const dispatch = this.dispatch.get(id);
      if (dispatch !== undefined) state.dispatch.set(id, { ...dispatch });
    }
    for (const { crawlId, host } of request.hosts) {
      const item = this.hostItems.get(stateKey(crawlId, host));
      if (item !== undefined) state.hosts.set(stateKey(crawlId, host), copy(item));
    }
    for (const { crawlId, origin } of request.robots) {
      const entry = this.robots.get(stateKey(crawlId, origin));
      if (entry !== undefined) state.robots.set(stateKey(crawlId, origin), copy(entry));
    }
    for (const { crawlId, origin } of request.rules ?? []) {
      const stored = this.rules.get(stateKey(crawlId, origin));
      if (stored !== undefined) state.rules.set(stateKey(crawlId, origin), copy(stored));
    }
    for (const id of request.rulesNews ?? []) {
      const news = this.rulesNews.get(id);
      if (news !== undefined) state.rulesNews.set(id, new Map([...news.values()]));
    }
    return state;
  }
  readonly shards = new Map<string, CounterShard>();
  async counterShards(crawlId: string): Promise<CounterShard[]> {
    this.#call('counterShards');
    return [...this.shards.entries()].filter(([k]) => k.startsWith(`${crawlId} `)).map(([, s]) => copy(s));
  }
  async addToShard(crawlId: string, shard: number, counts: CounterShard): Promise<void> {
    this.#call('addToShard');
    const key = `${crawlId} ${shard}`;
    const item = this.shards.get(key) ?? { ...emptyHostCounts(), hosts: 0 };
    addHostCounts(item, copy(counts));
    this.shards.set(key, item);
  }
  async updateHost(crawlId: string, host: string, update: HostUpdate): Promise<HostUpdateResult> {
    this.#call('updateHost');
    const key = stateKey(crawlId, host);
    const item = this.hostItems.get(key) ?? { ...emptyHostCounts(), host, nextAllowedAt: 0 };
    const group = update.group;
    const counted =
      update.ledger === undefined ||
      item.doneSeq === undefined ||
      item.doneSeq < sequenceKey(update.ledger.firstSeq);
    if (counted && group?.idleAt !== undefined && (item.group?.version ?? 0) !== group.idleAt) {
      // The idle condition failed (an offer came since the holder read the item): nothing is written.
      return { counted: false, firstRequest: false, moved: copy(item.group ?? { ...IDLE_GROUP }) };
    }
    item.nextAllowedAt = update.nextAllowedAt;
    if (update.crawlDelayMs !== undefined) item.crawlDelayMs = update.crawlDelayMs;
    if (update.probes !== undefined) item.probes = { ...item.probes, ...copy(update.probes) };
    if (counted && update.ledger !== undefined) item.doneSeq = sequenceKey(update.ledger.lastSeq);
    const before = item.requests;
    if (counted) addHostCounts(item, copy(update.counts));
    if (counted && update.recentlyFetched !== undefined) item.recentlyFetched = [...update.recentlyFetched];
    if (counted && update.root !== undefined) {
      item.rootHandled = true;
      if (update.root.used > 0) item.rootCredit = (item.rootCredit ?? 0) - update.root.used;
    }
    if (counted && group !== undefined) {
      const g = item.group ?? { ...IDLE_GROUP };
      g.queued += group.queuedDelta;
      if (group.drained !== undefined) g.drained = group.drained;
      if (group.added) g.version += 1;
      if (group.credits !== undefined) {
        if (group.credits.size === 0) delete g.credits;
        else g.credits = copy(group.credits);
      }
      delete g.starter;
      if (group.ended !== undefined) g.ended = [...group.ended];
      item.group = g;
    }
    this.hostItems.set(key, item);
    return { counted, firstRequest: counted && before === 0 && item.requests > 0 };
  }
  async addRootCredit(crawlId: string, host: string, amount: number): Promise<boolean> {
    this.#call('addRootCredit');
    const item = this.hostItems.get(stateKey(crawlId, host));
    if (item === undefined || item.rootHandled === true) return false;
    item.rootCredit = (item.rootCredit ?? 0) + amount;
    return true;
  }
  async noteBacklog(crawlId: string, host: string): Promise<HostGroup> {
    this.#call('noteBacklog');
    const item = this.#hostItem(crawlId, host);
    item.group = { ...IDLE_GROUP, ...item.group };
    item.group.version += 1;
    return copy(item.group);
  }
  async hostGroup(crawlId: string, host: string): Promise<HostGroup> {
    this.#call('hostGroup');
    return copy(this.hostItems.get(stateKey(crawlId, host))?.group ?? { ...IDLE_GROUP });
  }
  async startGroup(
    crawlId: string,
    host: string,
    queued: number,
    starter: string,
    options: { noted?: boolean } = {},
  ): Promise<boolean> {
    this.#call('startGroup');
    const item = this.#hostItem(crawlId, host);
    const g = item.group ?? { ...IDLE_GROUP };
    if (g.queued > 0 && g.starter !== starter) return false;
    item.group = { ...g, queued, starter, version: g.version + (options.noted === true ? 1 : 0) };
    return true;
  }
  #hostItem(crawlId: string, host: string): HostRecord {
    const key = stateKey(crawlId, host);
    const item = this.hostItems.get(key) ?? { ...emptyHostCounts(), host, nextAllowedAt: 0 };
    this.hostItems.set(key, item);
    return item;
  }
  async addBudget(crawlId: string, fetched: number, dispatch?: CrawlDispatch): Promise<void> {
    this.#call('addBudget');
    if (fetched <= 0) return;
    this.budgets.set(crawlId, (this.budgets.get(crawlId) ?? 0) + fetched);
    if (dispatch !== undefined) this.dispatch.set(crawlId, { ...dispatch });
  }
  async addAllowedHosts(crawlId: string, hosts: readonly string[]): Promise<void> {
    this.#call('addAllowedHosts');
    const crawl = this.crawls.get(crawlId);
    if (crawl === undefined || hosts.length === 0) return;
    crawl.allowedHosts = [...new Set([...(crawl.allowedHosts ?? []), ...hosts])];
  }
  async hostRules(crawlId: string, origin: string): Promise<StoredHostRules | undefined> {
    this.#call('hostRules');
    const stored = this.rules.get(stateKey(crawlId, origin));
    return stored === undefined ? undefined : copy(stored);
  }
  async putHostRules(
    crawlId: string,
    origin: string,
    records: readonly HostRuleRecord[],
    version: number,
    held: readonly HeldForm[] = [],
  ): Promise<HostRulesWrite> {
    this.#call('putHostRules');
    const key = stateKey(crawlId, origin);
    const stored = this.rules.get(key);
    if ((stored?.version ?? 0) !== version) {
      // As DynamoDB: a version that was never stored meets "no rules yet".
      return { written: false, stored: stored === undefined ? { records: [], version: 0 } : copy(stored) };
    }
    const item: StoredHostRules = { records: copy([...records]), version: version + 1 };
    if (held.length > 0) item.held = copy([...held]);
    this.rules.set(key, item);
    return { written: true, version: version + 1 };
  }
  /** Rules news per crawl: slot -> [origin, version] (as the DynamoDB item's slots). */
  readonly rulesNews = new Map<string, Map<number, [string, number]>>();
  async announceHostRules(crawlId: string, origin: string, version: number): Promise<void> {
    this.#call('announceHostRules');
    const news = this.rulesNews.get(crawlId) ?? new Map<number, [string, number]>();
    news.set(rulesNewsSlot(origin), [origin, version]);
    this.rulesNews.set(crawlId, news);
  }
  async crawlRules(crawlId: string): Promise<RuleRecord[]> {
    this.#call('crawlRules');
    const out: RuleRecord[] = [];
    for (const [key, stored] of this.rules) {
      if (!key.startsWith(`${crawlId} `)) continue;
      const origin = key.slice(crawlId.length + 1);
      for (const record of stored.records) out.push({ origin, ...copy(record) });
    }
    return out;
  }
  /** The crawl's counters as the API would sum them. */
  counters(crawlId: string): CrawlCounters {
    const crawl = this.crawls.get(crawlId);
    const hosts = [...this.hostItems.entries()]
      .filter(([k]) => k.startsWith(`${crawlId} `))
      .map(([, h]) => h);
    return aggregateCounters(crawl?.seeds ?? 0, hosts, crawl?.aopic?.admitted ?? 0).counters;
  }
}

/** UrlTable claims in memory: owner-conditional, with the gate, remembering owners and parking. */
export class MemorySeenStore implements OwnedSeenStore {
  readonly owners: Map<Fingerprint, string>;
  readonly parkedSet: Set<Fingerprint>;
  readonly #known = new Map<Fingerprint, string>();
  constructor(owners: Map<Fingerprint, string>, parked: Set<Fingerprint>) {
    this.owners = owners;
    this.parkedSet = parked;
  }
  ownerOf(fp: Fingerprint): string | undefined {
    return this.#known.get(fp);
  }
  isParked(fp: Fingerprint): boolean {
    return this.parkedSet.has(fp);
  }
  async claim(fps: readonly Fingerprint[], owner: string, options: ClaimOptions = {}): Promise<boolean[]> {
    const { gate, hosts } = options;
    // As the cloud's store (DynamoSeenLog), which keeps claims by host: every caller must say them.
    if (fps.length > 0 && hosts?.length !== fps.length) {
      throw new Error(`URL-seen by host: ${fps.length} fingerprints need as many hosts`);
    }
    const unclaimed = [...new Set(fps.filter((fp) => !this.owners.has(fp)))];
    for (const fp of fps) {
      const found = this.owners.get(fp);
      if (found !== undefined) this.#known.set(fp, found);
    }
    if (unclaimed.length > 0 && gate !== undefined && !(await gate(unclaimed))) {
      return fps.map((fp) => this.owners.get(fp) === owner);
    }
    for (const fp of unclaimed) {
      this.owners.set(fp, owner);
      this.#known.set(fp, owner);
    }
    return fps.map((fp) => this.owners.get(fp) === owner);
  }
}

/** Content hashes in memory (first URL wins; the same URL again is not a duplicate). */
export class MemoryContentSeen implements CheckedContentSeenStore {
  readonly hashes = new Map<string, string>();
  async find(hash: string): Promise<string | undefined> {
    return this.hashes.get(hash);
  }
  async claim(hash: string, url: string): Promise<string | undefined> {
    const found = this.hashes.get(hash);
    if (found === undefined) {
      this.hashes.set(hash, url);
      return undefined;
    }
    return found === url ? undefined : found;
  }
}

/**
 * robots entries of one crawl in memory, with the warm map the worker primes. As
 * DynamoRobotsCache: the warm map answers while its entry is valid (by `clock`), then the table.
 */
export class MemoryRobotsCache implements WarmRobotsCache {
  readonly #table: MemoryCrawlTable;
  readonly #crawlId: string;
  readonly #clock: Clock;
  readonly warm = new Map<string, RobotsEntry>();
  constructor(table: MemoryCrawlTable, crawlId: string, clock: Clock = { now: () => Date.now() }) {
    this.#table = table;
    this.#crawlId = crawlId;
    this.#clock = clock;
  }
  isWarm(origin: string): boolean {
    return this.warm.has(origin);
  }
  prime(origin: string, entry: RobotsEntry): void {
    this.warm.set(origin, copy(entry));
  }
  async get(origin: string): Promise<RobotsEntry | undefined> {
    const warm = this.warm.get(origin);
    // An expired warm entry may have been refreshed by another container: look before refetching.
    if (warm !== undefined && warm.expiresAt > this.#clock.now()) return copy(warm);
    const entry = this.#table.robots.get(stateKey(this.#crawlId, origin));
    if (entry !== undefined) this.warm.set(origin, copy(entry));
    return copy(entry ?? warm);
  }
  async put(origin: string, entry: RobotsEntry): Promise<void> {
    this.warm.set(origin, copy(entry));
    this.#table.robots.set(stateKey(this.#crawlId, origin), copy(entry));
  }
}

/** A frontier queue in memory: every task sent, in order. */
export class MemoryFrontier implements Frontier {
  readonly sent: CrawlTask[] = [];
  failing = false;
  async enqueue(tasks: readonly CrawlTask[]): Promise<void> {
    if (this.failing) throw new Error('SendMessageBatch failed (test)');
    this.sent.push(...copy([...tasks]));
  }
}

/** The capture queue in memory. */
export class MemoryCaptures implements CaptureSink {
  readonly bodies: string[] = [];
  async send(bodies: readonly string[]): Promise<void> {
    this.bodies.push(...bodies);
  }
  /** The page records of the capture messages (trace messages left out). */
  pages(): { url: string; reason?: string; status: number | null }[] {
    return this.bodies
      .filter((b) => !isTraceBody(b))
      .map((b) => (JSON.parse(b) as { page: { url: string; reason?: string; status: number | null } }).page);
  }
}

/** The DLQ in memory. */
export class MemoryDeadLetters implements DeadLetterSink {
  readonly letters: DeadLetter[] = [];
  async send(letter: DeadLetter): Promise<void> {
    this.letters.push(copy(letter));
  }
}

/** Visibility changes, recorded. */
export class MemoryVisibility implements MessageVisibility {
  readonly changes: VisibilityChange[] = [];
  async changeVisibility(changes: readonly VisibilityChange[]): Promise<number> {
    this.changes.push(...changes);
    return 0;
  }
}

/**
 * The frontier queue as the runner sees it (frontier-runner.ts), in memory, FIFO by group: a
 * receive hands out the messages of one group whose messages are not in flight, in order (as
 * SQS FIFO does); a group stays locked while one of its messages is in flight; a visibility
 * change puts a message back, or out of reach while its wait lasts (`delayed`).
 */
export class MemoryFrontierQueue implements FrontierReceiver, MessageVisibility {
  readonly waiting: ReceivedMessage[] = [];
  readonly inFlight = new Map<string, ReceivedMessage>();
  /** Made invisible for a while by a visibility change (not receivable until released). */
  readonly delayed: ReceivedMessage[] = [];
  readonly removed: string[] = [];
  readonly changes: VisibilityChange[] = [];
  receives = 0;
  emptyReceives = 0;

  push(...messages: ReceivedMessage[]): void {
    this.waiting.push(...messages);
  }

  async receive(max: number): Promise<ReceivedMessage[]> {
    this.receives += 1;
    const locked = new Set([...this.inFlight.values()].map((m) => m.groupId));
    const first = this.waiting.find((m) => !locked.has(m.groupId));
    if (first === undefined) {
      this.emptyReceives += 1;
      return [];
    }
    const taken = this.waiting.filter((m) => m.groupId === first.groupId).slice(0, Math.min(10, max));
    for (const m of taken) {
      this.waiting.splice(this.waiting.indexOf(m), 1);
      m.receiveCount += 1;
      this.inFlight.set(m.receiptHandle, m);
    }
    return copy(taken);
  }

  async remove(receiptHandles: readonly string[]): Promise<number> {
    for (const handle of receiptHandles) {
      if (this.inFlight.delete(handle)) this.removed.push(handle);
    }
    return 0;
  }

  async changeVisibility(changes: readonly VisibilityChange[]): Promise<number> {
    this.changes.push(...changes);
    const back: ReceivedMessage[] = [];
    for (const { receiptHandle, seconds } of changes) {
      const m = this.inFlight.get(receiptHandle);
      if (m === undefined) continue;
      this.inFlight.delete(receiptHandle);
      // Invisible for a while: out of reach until the test releases it.
      (seconds > 0 ? this.delayed : back).push(m);
    }
    // Back in front of the group's other messages, in their order.
    this.waiting.unshift(...back);
    return 0;
  }
}

/** The page bucket in memory. */
export class MemoryObjects implements ObjectStore, ObjectReader, ObjectLinks {
  readonly bucket = 'memory-bucket';
  readonly objects = new Map<string, Uint8Array>();
  async put(key: string, body: Uint8Array, _contentType?: string): Promise<void> {
    this.objects.set(key, new Uint8Array(body));
  }
  async keys(prefix: string, startAfter: string | undefined, max: number): Promise<string[]> {
    return [...this.objects.keys()]
      .filter((k) => k.startsWith(prefix) && (startAfter === undefined || k > startAfter))
      .sort()
      .slice(0, max);
  }
  async read(key: string, from: number): Promise<Uint8Array> {
    const object = this.objects.get(key);
    if (object === undefined) throw Object.assign(new Error(`no object ${key}`), { name: 'NoSuchKey' });
    // a copy, as bytes that came over the network: a caller that changes them changes no object
    return object.slice(from);
  }
  async list(prefix: string, startAfter: string | undefined, max: number): Promise<StoredObject[]> {
    const keys = await this.keys(prefix, startAfter, max);
    return keys.map((key) => ({ key, size: this.objects.get(key)?.length ?? 0 }));
  }
  async presignGet(key: string, expiresInSeconds: number): Promise<string> {
    return `memory://${this.bucket}/${key}?expires=${expiresInSeconds}`;
  }
}

/** Parked URLs in memory (the first parker owns a URL; admitted URLs are never parked again). */
export class MemoryParkedUrls implements ParkedUrls {
  readonly #seen: (crawlId: string) => MemorySeenStore;
  readonly #parkers = new Map<string, string>();
  readonly entries = new Map<string, ParkedUrl>();
  readonly admitted = new Set<string>();
  constructor(seen: (crawlId: string) => MemorySeenStore) {
    this.#seen = seen;
  }
  async park(
    crawlId: string,
    entries: readonly { task: CrawlTask; owner: string; key: number }[],
  ): Promise<void> {
    const seen = this.#seen(crawlId);
    for (const { task, owner, key } of entries) {
      const id = `${crawlId}#${task.fp}`;
      const parker = this.#parkers.get(id) ?? owner;
      if (parker !== owner || this.admitted.has(id)) continue;
      this.#parkers.set(id, owner);
      this.entries.set(id, { task: copy(task), key });
      seen.parkedSet.add(task.fp);
    }
  }
  async credit(crawlId: string, credits: ReadonlyMap<Fingerprint, number>): Promise<Fingerprint[]> {
    const missing: Fingerprint[] = [];
    for (const [fp, amount] of credits) {
      const entry = this.entries.get(`${crawlId}#${fp}`);
      if (entry === undefined) missing.push(fp);
      else entry.key += amount;
    }
    return missing;
  }
  async richest(crawlId: string, limit: number): Promise<ParkedUrl[]> {
    return [...this.entries.entries()]
      .filter(([id]) => id.startsWith(`${crawlId}#`))
      .map(([, e]) => copy(e))
      .sort((a, b) => b.key - a.key)
      .slice(0, limit);
  }
  readonly claims = new Map<string, { admitter: string; at: number }>();
  now = () => 0;
  async claimAdmission(
    crawlId: string,
    fps: readonly Fingerprint[],
    admitter: string,
  ): Promise<Fingerprint[]> {
    const mine: Fingerprint[] = [];
    for (const fp of new Set(fps)) {
      const id = `${crawlId}#${fp}`;
      if (!this.entries.has(id)) continue;
      const claim = this.claims.get(id);
      if (claim !== undefined && claim.admitter !== admitter && claim.at >= this.now() - ADMISSION_CLAIM_MS)
        continue;
      this.claims.set(id, { admitter, at: this.now() });
      mine.push(fp);
    }
    return mine;
  }
  async unpark(crawlId: string, fps: readonly Fingerprint[]): Promise<number> {
    let n = 0;
    for (const fp of fps) {
      const id = `${crawlId}#${fp}`;
      // as the UrlTable's conditional update: only a parked URL is taken out, and only it is admitted
      if (!this.entries.delete(id)) continue;
      n += 1;
      this.claims.delete(id);
      this.admitted.add(id);
      this.#seen(crawlId).parkedSet.delete(fp);
    }
    return n;
  }
}

/** The hosts' back queues in memory: turns per crawl and host, by key (as DynamoDB sorts them), every add seen at once. */
export class MemoryHostBacklog implements HostBacklog {
  readonly queues = new Map<string, Map<string, BacklogTurn>>();
  readonly calls: string[] = [];

  async add(crawlId: string, host: string, tasks: readonly CrawlTask[]): Promise<void> {
    this.calls.push('add');
    const queue = this.queues.get(stateKey(crawlId, host)) ?? new Map<string, BacklogTurn>();
    for (const turn of turnsOf(tasks)) queue.set(turn.key, copy(turn));
    this.queues.set(stateKey(crawlId, host), queue);
  }
  async richest(crawlId: string, host: string, turns: number): Promise<BacklogTurn[]> {
    this.calls.push('richest');
    const queue = this.queues.get(stateKey(crawlId, host));
    return [...(queue?.values() ?? [])]
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, Math.max(0, turns))
      .map(copy);
  }
  async remove(crawlId: string, host: string, turns: readonly BacklogTurn[]): Promise<void> {
    this.calls.push('remove');
    const queue = this.queues.get(stateKey(crawlId, host));
    for (const turn of turns) queue?.delete(turn.key);
  }
  /** Every task waiting, over all hosts. */
  size(): number {
    let n = 0;
    for (const queue of this.queues.values()) for (const turn of queue.values()) n += turn.tasks.length;
    return n;
  }
}

/** The archives' per-URL state in memory (values copied in and out, as across a network). */
export class MemoryArchiveStore implements ArchiveStore {
  readonly archives = new Map<string, Map<string, ArchiveEntry>>();
  readonly roundItems = new Map<string, ArchiveRounds>();
  readonly calls: string[] = [];

  #of(archive: string): Map<string, ArchiveEntry> {
    let entries = this.archives.get(archive);
    if (entries === undefined) {
      entries = new Map();
      this.archives.set(archive, entries);
    }
    return entries;
  }
  async entries(archive: string, urls: readonly string[]): Promise<Map<string, ArchiveEntry>> {
    this.calls.push('entries');
    const held = this.#of(archive);
    const found = new Map<string, ArchiveEntry>();
    for (const url of urls) {
      const entry = held.get(url);
      if (entry !== undefined) found.set(url, copy(entry));
    }
    return found;
  }
  async put(archive: string, entries: readonly ArchiveEntry[]): Promise<void> {
    this.calls.push('put');
    const held = this.#of(archive);
    for (const entry of entries) held.set(entry.page.url, copy(entry));
  }
  async pages(archive: string): Promise<ArchivedPage[]> {
    return [...this.#of(archive).values()].map((entry) => copy(entry.page));
  }
  async rounds(archive: string): Promise<ArchiveRounds | undefined> {
    const rounds = this.roundItems.get(archive);
    return rounds === undefined ? undefined : copy(rounds);
  }
  async startRound(archive: string, round: number, crawlId: string): Promise<boolean> {
    if ((this.roundItems.get(archive)?.rounds ?? 0) !== round - 1) return false;
    this.roundItems.set(archive, { rounds: round, last: crawlId });
    return true;
  }
}

/** Every store of the cloud in memory, keyed per crawl as the worker asks for them. */
export class MemoryCloud {
  readonly table = new MemoryCrawlTable();
  readonly frontier = new MemoryFrontier();
  readonly captures = new MemoryCaptures();
  readonly deadLetters = new MemoryDeadLetters();
  readonly visibility = new MemoryVisibility();
  readonly objects = new MemoryObjects();
  readonly owners = new Map<string, Map<Fingerprint, string>>();
  readonly parkedFps = new Map<string, Set<Fingerprint>>();
  readonly contents = new Map<string, MemoryContentSeen>();
  readonly parked = new MemoryParkedUrls((crawlId) => this.seen(crawlId));
  readonly backlog = new MemoryHostBacklog();
  readonly archives = new MemoryArchiveStore();
  readonly #stores = new Map<string, CrawlStores>();

  /** The API's dependencies over this cloud (the page bucket serves both reads and links). */
  apiDeps(clock: { now(): number }, newId: () => string): ApiDeps {
    return {
      table: this.table,
      frontier: this.frontier,
      seen: (id) => this.seen(id),
      pages: this.objects,
      archive: this.objects,
      archives: this.archives,
      clock,
      newId,
    };
  }

  /** A fresh view of a crawl's URL-seen store (a new container's instance: nothing known yet). */
  seen(crawlId: string): MemorySeenStore {
    const owners = this.owners.get(crawlId) ?? new Map<Fingerprint, string>();
    this.owners.set(crawlId, owners);
    const parked = this.parkedFps.get(crawlId) ?? new Set<Fingerprint>();
    this.parkedFps.set(crawlId, parked);
    return new MemorySeenStore(owners, parked);
  }

  #content(crawlId: string): MemoryContentSeen {
    const content = this.contents.get(crawlId) ?? new MemoryContentSeen();
    this.contents.set(crawlId, content);
    return content;
  }

  /** The stores of one crawl for one container (call `forContainer` per simulated container). */
  stores(crawlId: string): CrawlStores {
    let stores = this.#stores.get(crawlId);
    if (stores === undefined) {
      const content = this.#content(crawlId);
      stores = {
        seen: this.seen(crawlId),
        contentSeen: content,
        robots: new MemoryRobotsCache(this.table, crawlId),
      };
      this.#stores.set(crawlId, stores);
    }
    return stores;
  }

  /**
   * Per-container stores over the same data (a second container has its own warm maps, whose
   * robots entries expire by `clock`, as the worker's do).
   */
  forContainer(clock?: Clock): (crawlId: string) => CrawlStores {
    const own = new Map<string, CrawlStores>();
    return (crawlId) => {
      let stores = own.get(crawlId);
      if (stores === undefined) {
        const content = this.#content(crawlId);
        stores = {
          seen: this.seen(crawlId),
          contentSeen: content,
          robots: new MemoryRobotsCache(this.table, crawlId, clock),
        };
        own.set(crawlId, stores);
      }
      return stores;
    };
  }
}
