/**
 * Bounded back queues (functions/cloud/frontier/back-queues.ts): a host's FIFO group holds at most
 * its limit, the rest waits in the host's back queue and refills the group richest first; offers
 * from other hosts start an idle group once; a holder that would leave its group idle reads the
 * back queue again when an offer came meanwhile; a crash at any point of a refill or an offer
 * loses nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type FaultStep, InjectedCrashError } from '../../../functions/cloud/fault-hook.ts';
import {
  ADMIT_STARTER,
  BACKLOG_CREDIT_MISSES,
  BackQueueFrontier,
  CREDIT_DEEP_TURNS,
  CREDIT_WINDOW_TURNS,
  GroupHints,
  nextCredits,
  offerTasks,
  refillPlan,
  SEEDS_STARTER,
} from '../../../functions/cloud/frontier/back-queues.ts';
import { BACKLOG_TURN } from '../../../functions/cloud/lambda-settings.ts';
import { FETCHES_REMEMBERED, type HostGroup } from '../../../functions/cloud/messages/crawl-records.ts';
import { resendId } from '../../../functions/cloud/messages/task-message.ts';
import { stateKey } from '../../../functions/cloud/ports/cloud-ports.ts';
import { admitParked } from '../../../functions/cloud/use-cases/redistribute-credit.ts';
import { refillPick } from '../../../functions/cloud/worker/batch-commit.ts';
import type { BatchOutcome, FrontierMessage } from '../../../functions/cloud/worker/batch-model.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import type { SitemapFetch } from '../../../functions/core/sitemap/sitemap-plan.ts';
import type { CrawlTask } from '../../../functions/core/types.ts';
import { MemoryCloud, MemoryHostBacklog } from './memory-cloud.ts';
import { MemoryFetcher, page } from './memory-fetcher.ts';
import { messageFor, runningCrawl, TestClock, workerOver } from './worker-kit.ts';

const SITE = 'http://a.example';
const OTHER = 'http://b.example';
const base = { scope: 'any', soft404Probe: false, delayMs: 0, delayFactor: 0, sitemaps: false };

function task(url: string, cash: number, crawlId = 'c1'): CrawlTask {
  const u = new URL(url);
  return {
    crawlId,
    url,
    fp: Buffer.from(url).toString('hex').slice(-16).padStart(16, '0'),
    host: u.host,
    depth: 1,
    parent: '0000000000000000',
    redirects: 0,
    attempt: 0,
    cash,
  };
}

/**
 * a.example serving each path as a page (robots.txt: 404), and a running crawl of it seeded at the
 * first path, with the paths' tasks.
 */
function siteCrawl(paths: readonly string[], config: Record<string, unknown> = {}) {
  const clock = new TestClock();
  const cloud = new MemoryCloud();
  const fetcher = new MemoryFetcher({
    [`${SITE}/robots.txt`]: { status: 404 },
    ...Object.fromEntries(paths.map((p) => [`${SITE}${p}`, { status: 200, body: page(p) }])),
  });
  const crawl = runningCrawl(cloud, { seeds: [`${SITE}${paths[0]}`], ...base, ...config }, clock);
  return { clock, cloud, fetcher, crawl, tasks: crawl.tasks(paths.map((p) => `${SITE}${p}`)) };
}

/** URLs of a.example sent to the queue or waiting in its back queue, in that order. */
function sentOrWaiting(cloud: MemoryCloud, crawlId: string): string[] {
  const waiting = [...(cloud.backlog.queues.get(stateKey(crawlId, 'a.example'))?.values() ?? [])];
  return [...cloud.frontier.sent, ...waiting.flatMap((turn) => turn.tasks)].map((t) => t.url);
}

/** A refill of a.example's group in crawl c1, at most 10 messages. */
function refillA(backlog: MemoryHostBacklog, own: CrawlTask[], inGroup: number, group: HostGroup) {
  return refillPlan(backlog, 'c1', 'a.example', own, inGroup, group, { limit: 10 });
}

describe('refillPlan', () => {
  it('fills the room with the richer of the own links (one by one) and the back queue (a turn at a time)', async () => {
    const backlog = new MemoryHostBacklog();
    await backlog.add('c1', 'a.example', [task(`${SITE}/rich`, 5), task(`${SITE}/poor`, 0.1)]);
    const own = [task(`${SITE}/x`, 1), task(`${SITE}/y`, 3), task(`${SITE}/z`, 0.5)];
    const plan = await refillA(backlog, own, 7, { queued: 7, version: 1, drained: 0 });
    assert.deepEqual(
      plan.send.map((t) => t.url),
      [`${SITE}/rich`, `${SITE}/poor`, `${SITE}/y`],
      'the turn whose richest task beats every own link, whole, then the richest own link',
    );
    assert.deepEqual(
      plan.taken.flatMap((t) => t.tasks.map((x) => x.url)),
      [`${SITE}/rich`, `${SITE}/poor`],
    );
    assert.deepEqual(
      plan.wait.map((t) => t.url),
      [`${SITE}/x`, `${SITE}/z`],
    );
    assert.equal(plan.drained, true, 'the read found fewer turns than it asked for, and took them all');
  });

  it('reads nothing when the host item says the back queue is drained, and nothing when the group is full', async () => {
    const backlog = new MemoryHostBacklog();
    const own = [task(`${SITE}/x`, 1)];
    const drained = await refillA(backlog, own, 0, { queued: 3, version: 2, drained: 2 });
    assert.deepEqual(backlog.calls, []);
    assert.equal(drained.send.length, 1);
    const full = await refillA(backlog, own, 10, { queued: 10, version: 3, drained: 2 });
    assert.deepEqual(backlog.calls, []);
    assert.deepEqual(full.send, []);
    assert.deepEqual(
      full.wait.map((t) => t.url),
      [`${SITE}/x`],
    );
  });
});

describe('refillPlan weighed by the richest candidate (a budgeted crawl)', () => {
  it('fills the group only to the size `weigh` gives for its richest candidate, never below one message', async () => {
    const backlog = new MemoryHostBacklog();
    await backlog.add('c1', 'a.example', [task(`${SITE}/w1`, 0.1), task(`${SITE}/w2`, 0.09)]);
    const own = [task(`${SITE}/o1`, 0.05), task(`${SITE}/o2`, 0.04)];
    const asked: number[] = [];
    const weigh = (richest: CrawlTask) => {
      asked.push(richest.cash);
      return 3;
    };
    const group = { queued: 1, version: 1, drained: 0 };
    const options = { limit: 10, pick: 'by-task' as const, weigh };
    const plan = await refillPlan(backlog, 'c1', 'a.example', own, 1, group, options);
    assert.deepEqual(asked, [0.1], 'weighed by the richest of the own links and the back queue');
    assert.deepEqual(
      plan.send.map((t) => t.url),
      [`${SITE}/w1`, `${SITE}/w2`],
      'a group of 3, one message staying: two sent',
    );
    assert.deepEqual(plan.wait.map((t) => t.url).sort(), [`${SITE}/o1`, `${SITE}/o2`], 'the own links wait');
    const none = await refillPlan(backlog, 'c1', 'a.example', own, 0, group, { ...options, weigh: () => 0 });
    assert.equal(none.send.length, 1, 'an empty group gets its richest at least: it must not go idle');
  });
});

describe("refillPlan by task (a budgeted crawl's refills)", () => {
  const byTask = (
    backlog: MemoryHostBacklog,
    own: CrawlTask[],
    inGroup: number,
    group: HostGroup,
    owed = new Map(),
  ) => refillPlan(backlog, 'c1', 'a.example', own, inGroup, group, { limit: 10, owed, pick: 'by-task' });

  it('fills the room with the richest tasks one at a time; what a taken turn does not send waits again', async () => {
    const backlog = new MemoryHostBacklog();
    await backlog.add('c1', 'a.example', [task(`${SITE}/rich`, 5), task(`${SITE}/poor`, 0.1)]);
    const own = [task(`${SITE}/x`, 1), task(`${SITE}/y`, 3), task(`${SITE}/z`, 0.5)];
    const plan = await byTask(backlog, own, 7, { queued: 7, version: 1, drained: 0 });
    assert.deepEqual(
      plan.send.map((t) => t.url),
      [`${SITE}/rich`, `${SITE}/y`, `${SITE}/x`],
      'the three richest wherever they wait: by turn, /poor came along with /rich',
    );
    assert.deepEqual(
      plan.taken.flatMap((t) => t.tasks.map((x) => x.url)),
      [`${SITE}/rich`, `${SITE}/poor`],
    );
    assert.deepEqual(
      plan.wait.map((t) => t.url),
      [`${SITE}/z`, `${SITE}/poor`],
      "the own link that does not fit, and the taken turn's task that was not sent",
    );
    assert.equal(
      plan.drained,
      true,
      'read to its end and all taken (what waits again is added with a new version)',
    );
  });

  for (const pick of ['by-task', 'by-turn'] as const)
    it(`URLs of the refilling batch are never sent; a turn holding one leaves, its others wait again (${pick})`, async () => {
      const backlog = new MemoryHostBacklog();
      // Two turns: one all of the batch's URLs, one mixed (BACKLOG_TURN tasks each, richest first).
      const held = Array.from({ length: BACKLOG_TURN }, (_, i) => task(`${SITE}/held${i}`, 9 - i * 0.1));
      const mixed = [
        task(`${SITE}/mine`, 5),
        ...Array.from({ length: BACKLOG_TURN - 1 }, (_, i) => task(`${SITE}/w${i}`, 4 - i * 0.1)),
      ];
      await backlog.add('c1', 'a.example', [...held, ...mixed]);
      const handled = new Set([...held, mixed[0]!].map((t) => t.fp));
      const plan = await refillPlan(
        backlog,
        'c1',
        'a.example',
        [],
        9,
        { queued: 9, version: 1, drained: 0 },
        {
          limit: 10,
          pick,
          handled,
        },
      );
      // By task the richest one fills the room; by turn the mixed turn goes whole, less /mine.
      const sent = pick === 'by-task' ? mixed.slice(1, 2) : mixed.slice(1);
      assert.deepEqual(
        plan.send.map((t) => t.url),
        sent.map((t) => t.url),
        'the richest not in the batch',
      );
      assert.equal(plan.taken.length, 2, 'both turns leave');
      assert.deepEqual(
        plan.wait.map((t) => t.url).sort(),
        mixed
          .slice(1 + sent.length)
          .map((t) => t.url)
          .sort(),
        "the mixed turn's others wait again; the batch's own URLs nowhere",
      );
    });

  it('a credited URL goes first, then the richest others: not its whole turn; the credits leave with their tasks', async () => {
    const backlog = new MemoryHostBacklog();
    const tasks = Array.from({ length: 60 }, (_, i) => task(`${SITE}/p${i}`, 1 - i / 100));
    await backlog.add('c1', 'a.example', tasks);
    const credited = tasks[30]!;
    const owed = new Map([[credited.fp, { amount: 0.5, misses: 0 }]]);
    const plan = await byTask(backlog, [], 8, { queued: 8, version: 1, drained: 0 }, owed);
    assert.deepEqual(
      plan.send.map((t) => t.url),
      [`${SITE}/p30`, `${SITE}/p0`],
    );
    assert.equal(plan.send[0]?.cash, credited.cash + 0.5);
    assert.deepEqual(
      plan.wait.map((t) => t.url).sort(),
      [31, 32, 33, 34, 35, 1, 2, 3, 4, 5].map((i) => `${SITE}/p${i}`).sort(),
      'the rest of the two taken turns waits again',
    );
    assert.equal(plan.credits.size, 0);
    assert.equal(plan.drained, false, 'four turns read were not taken');
  });

  it('a URL waiting in two turns is sent once, and both turns leave', async () => {
    const backlog = new MemoryHostBacklog();
    await backlog.add('c1', 'a.example', [task(`${SITE}/twice`, 5), task(`${SITE}/one`, 4)]);
    await backlog.add('c1', 'a.example', [task(`${SITE}/twice`, 3), task(`${SITE}/later`, 0.1)]);
    const plan = await byTask(backlog, [task(`${SITE}/twice`, 2)], 8, { queued: 8, version: 2, drained: 0 });
    assert.deepEqual(
      plan.send.map((t) => t.url),
      [`${SITE}/one`, `${SITE}/twice`],
      'ranked as the own link (see the next test)',
    );
    assert.equal(plan.taken.length, 2, 'the second turn holds a URL sent now: it leaves too');
    assert.deepEqual(
      plan.wait.map((t) => t.url),
      [`${SITE}/later`],
      'and its other task waits again',
    );
  });

  it('a redone commit picks what its first try picked, whatever the turn that try left says', async () => {
    // A page's three links of equal cash; the first try sent /a (room 1) and left /b and /c in a
    // turn, keyed with the lambda bonus of its time. The redo's own links are keyed with a later
    // bonus: lower keys for the same URLs.
    const backlog = new MemoryHostBacklog();
    await backlog.add('c1', 'a.example', [task(`${SITE}/b`, 1.2), task(`${SITE}/c`, 1.2)]);
    const own = [task(`${SITE}/a`, 1), task(`${SITE}/b`, 1), task(`${SITE}/c`, 1)];
    const plan = await byTask(backlog, own, 9, { queued: 9, version: 1, drained: 0 });
    assert.deepEqual(
      plan.send.map((t) => t.url),
      [`${SITE}/a`],
      "the first try's pick again (its send's copy is dropped by SQS), not /b, which would be sent twice",
    );
    assert.equal(plan.taken.length, 0, "the first try's turn stays: it holds what is still unsent");
    assert.deepEqual(
      plan.wait.map((t) => t.url),
      [`${SITE}/b`, `${SITE}/c`],
    );
  });

  it('a budgeted AOPIC crawl refills by task; others by turn', () => {
    const config = (input: Record<string, unknown>) => {
      const parsed = parseCrawlConfig({ seeds: [`${SITE}/`], ...input });
      assert.ok(parsed.ok);
      return parsed.config;
    };
    assert.equal(refillPick(config({ maxPages: 100 })), 'by-task');
    assert.equal(refillPick(config({})), 'by-turn');
    assert.equal(refillPick(config({ maxPages: 100, order: 'bfs' })), 'by-turn');
  });
});

describe('one URL in one send once', () => {
  it('a URL waiting in two turns, and among the own links, is sent once and counted once', async () => {
    // Two pages each claimed /twice (or a redone commit added it again): it waits in two turns.
    const backlog = new MemoryHostBacklog();
    await backlog.add('c1', 'a.example', [task(`${SITE}/twice`, 5), task(`${SITE}/one`, 4)]);
    await backlog.add('c1', 'a.example', [task(`${SITE}/twice`, 3)]);
    const own = [task(`${SITE}/twice`, 2), task(`${SITE}/mine`, 1)];
    const plan = await refillA(backlog, own, 0, { queued: 0, version: 2, drained: 0 });
    assert.deepEqual(
      plan.send.map((t) => t.url),
      [`${SITE}/twice`, `${SITE}/one`, `${SITE}/mine`],
      'SQS would keep one of two copies with the same deduplication id: the group counts what it keeps',
    );
    assert.equal(plan.taken.length, 2, 'both turns leave the back queue');
    assert.deepEqual(plan.wait, []);
  });

  it('an idle group started from its back queue gets each URL once', async () => {
    const cloud = new MemoryCloud();
    await cloud.backlog.add('c1', 'a.example', [task(`${SITE}/twice`, 5)]);
    await cloud.backlog.add('c1', 'a.example', [task(`${SITE}/twice`, 4), task(`${SITE}/other`, 1)]);
    // Seen busy a moment ago (a hint): the offer goes through the back queue, which starts the group.
    const hints = new GroupHints(() => 0, 1_000);
    hints.seen(stateKey('c1', 'a.example'), true);
    const deps = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier, hints };
    const sent = await offerTasks(deps, [task(`${SITE}/new`, 0.5)], () => 'page-1');
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${SITE}/twice`, `${SITE}/other`, `${SITE}/new`],
    );
    assert.equal(sent, 3);
    assert.equal(cloud.table.hostItems.get(stateKey('c1', 'a.example'))?.group?.queued, 3);
  });
});

describe('sitemap files in a back queue', () => {
  const sitemap = (url: string, from: SitemapFetch['from']): CrawlTask => ({
    ...task(url, 0),
    sitemap: {
      url,
      scope: `${SITE}/`,
      granted: true,
      level: from === 'index' ? 1 : 0,
      from,
      files: 1,
      entries: 100,
    },
  });

  it('a sitemap the site names goes before every page, whatever their cash; a guessed one waits by cash', async () => {
    const backlog = new MemoryHostBacklog();
    await backlog.add('c1', 'a.example', [
      task(`${SITE}/rich`, 5),
      sitemap(`${SITE}/sitemaps/child.xml`, 'index'),
      task(`${SITE}/poor`, 0.1),
    ]);
    const own = [
      task(`${SITE}/y`, 3),
      sitemap(`${SITE}/sitemap.xml`, 'default'),
      sitemap(`${SITE}/named.xml`, 'robots'),
    ];
    const plan = await refillPlan(
      backlog,
      'c1',
      'a.example',
      own,
      0,
      { queued: 0, version: 1, drained: 0 },
      { limit: 6 },
    );
    assert.deepEqual(
      plan.send.map((t) => new URL(t.url).pathname),
      ['/named.xml', '/sitemaps/child.xml', '/rich', '/poor', '/y', '/sitemap.xml'],
      'the turn led by a named sitemap goes whole before the own pages',
    );
  });
});

/** A refill of host a.example of crawl c1 with no own links, a group limit of 8 and credits owed. */
function refillOwed(
  backlog: MemoryHostBacklog,
  inGroup: number,
  group: { queued: number; version: number; drained: number },
  owed: Map<string, { amount: number; misses: number }>,
) {
  return refillPlan(backlog, 'c1', 'a.example', [], inGroup, group, { limit: 8, owed });
}

describe('credits to URLs in a back queue', () => {
  it('a credited URL lifts its turn above richer ones, carries its credit, and leaves the credits', async () => {
    const backlog = new MemoryHostBacklog();
    const tasks = Array.from({ length: 60 }, (_, i) => task(`${SITE}/p${i}`, 1 - i / 100));
    await backlog.add('c1', 'a.example', tasks);
    const last = tasks[30]!;
    const owed = new Map([
      [last.fp, { amount: 0.5, misses: 0 }],
      ['ffffffffffffffff', { amount: 0.2, misses: 0 }],
    ]);
    const plan = await refillOwed(backlog, 6, { queued: 6, version: 1, drained: 0 }, owed);
    assert.equal(plan.send[0]?.url, `${SITE}/p30`, 'the credited URL first (in the sixth turn of ten)');
    assert.equal(plan.send[0]?.cash, last.cash + 0.5, 'with its credit in its cash');
    assert.equal(plan.send.length, 6, 'its whole turn');
    assert.deepEqual([...plan.credits.keys()], ['ffffffffffffffff'], 'its credit left with it');
    assert.equal(
      plan.credits.get('ffffffffffffffff')?.misses,
      1,
      'a URL the read did not find counts a miss',
    );
    assert.equal(plan.toLambda, 0);
  });

  it('a credited URL deeper than the window is found by the next refill, which reads deep', async () => {
    const backlog = new MemoryHostBacklog();
    const tasks = Array.from({ length: 60 }, (_, i) => task(`${SITE}/p${i}`, 1 - i / 100));
    await backlog.add('c1', 'a.example', tasks);
    const deep = tasks[50]!; // the ninth turn of ten
    const group = { queued: 6, version: 1, drained: 0 };
    const first = await refillOwed(backlog, 6, group, new Map([[deep.fp, { amount: 0.6, misses: 0 }]]));
    assert.notEqual(first.send[0]?.url, `${SITE}/p50`, `the window read ${CREDIT_WINDOW_TURNS} turns`);
    assert.equal(first.credits.get(deep.fp)?.misses, 1, 'missed once, kept');
    const second = await refillOwed(backlog, 6, group, first.credits);
    assert.equal(second.send[0]?.url, `${SITE}/p50`, `read ${CREDIT_DEEP_TURNS} turns deep, found`);
    assert.equal(second.send[0]?.cash, deep.cash + 0.6);
    assert.equal(second.credits.size, 0);
  });

  it('credits that can reach no waiting URL go to the lambda page; the rest are bounded', () => {
    const owed = new Map([
      ['a', { amount: 0.4, misses: 0 }],
      ['b', { amount: 0.3, misses: BACKLOG_CREDIT_MISSES - 1 }],
      ['c', { amount: 0.2, misses: 0 }],
      ['d', { amount: 0.1, misses: 0 }],
    ]);
    const partial = nextCredits(
      owed,
      { found: new Set(['c']), consumed: new Set(['a']), complete: false },
      2,
    );
    assert.deepEqual([...partial.credits.keys()], ['c', 'd'], 'sent: gone; too many misses: to lambda');
    assert.equal(partial.credits.get('c')?.misses, 0);
    assert.ok(Math.abs(partial.toLambda - 0.3) < 1e-12);
    const whole = nextCredits(owed, { found: new Set(['c']), consumed: new Set(), complete: true });
    assert.deepEqual(
      [...whole.credits.keys()],
      ['c'],
      'the whole back queue read: who is not there is nowhere',
    );
    assert.ok(Math.abs(whole.toLambda - 0.8) < 1e-12, 'cash is conserved');
    const bounded = nextCredits(
      owed,
      { found: new Set(['a', 'b', 'c', 'd']), consumed: new Set(), complete: false },
      3,
    );
    assert.deepEqual([...bounded.credits.keys()], ['a', 'b', 'c'], 'the smallest leave first');
    assert.ok(Math.abs(bounded.toLambda - 0.1) < 1e-12);
  });

  it('a group with no room keeps its credits as they are; a back queue known empty gives them up', async () => {
    const backlog = new MemoryHostBacklog();
    const owed = new Map([['a', { amount: 0.4, misses: 1 }]]);
    const full = await refillOwed(backlog, 8, { queued: 8, version: 2, drained: 1 }, owed);
    assert.deepEqual(full.credits, owed);
    const empty = await refillOwed(backlog, 0, { queued: 1, version: 2, drained: 2 }, owed);
    assert.equal(empty.credits.size, 0);
    assert.equal(empty.toLambda, 0.4);
    assert.deepEqual(backlog.calls, [], 'neither read the back queue');
  });

  it('pages that link to a waiting URL bring it forward, as in the embedded crawler', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const links = Array.from({ length: 29 }, (_, i) => `/p${i}`);
    const routes: Record<string, { status: number; body?: string }> = {
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', links) },
    };
    // /p0 finds /hub among nine other links (a tenth of its share: poorer than every /pN); every
    // other page links to /hub alone: AOPIC's estimate of PageRank says it matters most.
    const others = Array.from({ length: 9 }, (_, i) => `/q${i}`);
    for (const l of links)
      routes[`${SITE}${l}`] = { status: 200, body: page(l, l === '/p0' ? ['/hub', ...others] : ['/hub']) };
    for (const l of ['/hub', ...others]) routes[`${SITE}${l}`] = { status: 200, body: page(l) };
    const fetcher = new MemoryFetcher(routes);
    const crawl = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base, order: 'aopic' }, clock);
    cloud.frontier.sent.push(...crawl.tasks([`${SITE}/`]));
    const worker = workerOver(cloud, fetcher, clock, { groupLimit: 4 });
    await drain(cloud, (m) => worker(m));
    const pages = fetcher.requests.filter((u) => u !== `${SITE}/` && !u.endsWith('/robots.txt'));
    assert.equal(pages.length, 39, 'every page once');
    const at = pages.indexOf(`${SITE}/hub`);
    assert.ok(
      at < 15,
      `/hub fetched ${at + 1}th of 39 (30th or later without credits: poorer than every /pN)`,
    );
    const group = cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))?.group;
    assert.equal(group?.credits, undefined, 'no credit left once the back queue drained');
  });
});

describe('offerTasks', () => {
  it('starts an idle group with its own richest tasks straight away; a busy group only gets a back queue', async () => {
    const cloud = new MemoryCloud();
    const deps = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier, groupLimit: 3 };
    const tasks = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => task(`${SITE}/${n}`, n));
    assert.equal(await offerTasks(deps, tasks, SEEDS_STARTER), 3);
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [8, 7, 6].map((n) => `${SITE}/${n}`),
    );
    // What did not fit waits in the back queue, noted by the start itself (the holder reads it).
    assert.equal(cloud.backlog.size(), 5);
    const group = cloud.table.hostItems.get(stateKey('c1', 'a.example'))?.group;
    assert.equal(group?.queued, 3);
    assert.ok(group !== undefined && group.version > group.drained, 'the back queue is noted');
    // Another offerer meets a busy group: its tasks wait.
    assert.equal(await offerTasks(deps, [task(`${SITE}/9`, 9)], () => 'someone else'), 0);
    assert.equal(cloud.backlog.size(), 6);
    assert.equal(cloud.table.hostItems.get(stateKey('c1', 'a.example'))?.group?.queued, 3);
  });

  it('an idle group whose offer fits is started with no back-queue write at all', async () => {
    const cloud = new MemoryCloud();
    const deps = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier, groupLimit: 6 };
    assert.equal(await offerTasks(deps, [task(`${SITE}/1`, 1), task(`${SITE}/2`, 2)], SEEDS_STARTER), 2);
    assert.deepEqual(cloud.table.calls, ['startGroup']);
    assert.equal(cloud.backlog.size(), 0);
  });

  it('a group seen busy lately gets its offers in the back queue without a start that would fail', async () => {
    const cloud = new MemoryCloud();
    let now = 0;
    const hints = new GroupHints(() => now, 1_000);
    const deps = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier, groupLimit: 1, hints };
    await offerTasks(deps, [task(`${SITE}/1`, 1)], SEEDS_STARTER);
    await offerTasks(deps, [task(`${SITE}/2`, 2)], () => 'b');
    assert.deepEqual(cloud.table.calls, ['startGroup', 'startGroup', 'noteBacklog']);
    cloud.table.calls.length = 0;
    await offerTasks(deps, [task(`${SITE}/3`, 3)], () => 'c');
    assert.deepEqual(cloud.table.calls, ['noteBacklog'], 'the hint skips the start');
    now = 2_000;
    cloud.table.calls.length = 0;
    await offerTasks(deps, [task(`${SITE}/4`, 4)], () => 'd');
    assert.deepEqual(cloud.table.calls, ['startGroup', 'noteBacklog'], 'an old hint is not trusted');
    assert.equal(cloud.backlog.size(), 3);
  });

  it('a starter that died after winning the start sends when it comes back; nobody else does', async () => {
    const cloud = new MemoryCloud();
    const deps = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier, groupLimit: 2 };
    const tasks = [task(`${SITE}/1`, 1), task(`${SITE}/2`, 2)];
    cloud.frontier.failing = true;
    await assert.rejects(offerTasks(deps, tasks, SEEDS_STARTER));
    cloud.frontier.failing = false;
    assert.equal(await offerTasks(deps, [task(`${SITE}/3`, 0)], () => 'other'), 0, 'not idle any more');
    assert.equal(await offerTasks(deps, tasks, SEEDS_STARTER), 2, 'the starter again');
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${SITE}/2`, `${SITE}/1`],
    );
  });
});

/** Runs the worker over whatever the queue holds, a host's messages in order, until nothing is left. */
async function drain(
  cloud: MemoryCloud,
  worker: (messages: readonly FrontierMessage[]) => Promise<BatchOutcome>,
  onBatch: (sentSoFar: number) => void = () => {},
): Promise<void> {
  for (let rounds = 0; rounds < 500; rounds++) {
    const pending = cloud.frontier.sent.splice(0);
    if (pending.length === 0) return;
    const byGroup = new Map<string, CrawlTask[]>();
    for (const t of pending) byGroup.set(t.host, [...(byGroup.get(t.host) ?? []), t]);
    for (const group of byGroup.values()) {
      for (let i = 0; i < group.length; i += 10) {
        await worker(group.slice(i, i + 10).map((t) => messageFor(t)));
        onBatch(cloud.frontier.sent.length);
      }
    }
  }
  throw new Error('the crawl did not drain');
}

/**
 * A crawl of a.example's root over `routes`, its seed started as every group is, and its first
 * batch run by a worker that dies once, after its captures (its sends done, its ledger not).
 */
async function seedCrashedOnce(routes: ConstructorParameters<typeof MemoryFetcher>[0]) {
  const clock = new TestClock();
  const cloud = new MemoryCloud();
  const fetcher = new MemoryFetcher(routes);
  const crawl = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
  const deps = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier };
  await offerTasks(deps, crawl.tasks([`${SITE}/`]), SEEDS_STARTER);
  const seed = messageFor(cloud.frontier.sent.splice(0)[0]!);
  let crashed = false;
  const fault = (at: FaultStep) => {
    if (at === 'after-captures' && !crashed) {
      crashed = true;
      throw new InjectedCrashError(at, 1);
    }
  };
  const worker = workerOver(cloud, fetcher, clock, { fault });
  await assert.rejects(worker([seed]), InjectedCrashError);
  return { cloud, fetcher, crawl, seed, worker };
}

describe('the worker with bounded back queues', () => {
  /** A site whose root links to 60 pages, each linking to one page of another host. */
  function bigSite() {
    const links = Array.from({ length: 60 }, (_, i) => `/p${i}`);
    const routes: Record<string, { status: number; body?: string }> = {
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${OTHER}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', links) },
    };
    for (const [i, l] of links.entries()) {
      routes[`${SITE}${l}`] = { status: 200, body: page(l, [`${OTHER}/q${i % 7}`]) };
    }
    for (let i = 0; i < 7; i++) routes[`${OTHER}/q${i}`] = { status: 200, body: page(`q${i}`) };
    return routes;
  }

  // A budget refills by task (refillPick); the clock moves 3 s a batch, so that no page is held
  // back (this drain does not deliver deferred messages again).
  const budgets = [{}, { maxPages: 10_000 }];

  for (const budget of budgets)
    it(`keeps every host's group at its limit and fetches every page, the richest first (${JSON.stringify(budget)})`, async () => {
      const clock = new TestClock();
      const cloud = new MemoryCloud();
      const fetcher = new MemoryFetcher(bigSite());
      const crawl = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base, ...budget }, clock);
      cloud.frontier.sent.push(...crawl.tasks([`${SITE}/`]));
      const worker = workerOver(cloud, fetcher, clock, { groupLimit: 10 });
      const queuedPeak = new Map<string, number>();
      await drain(
        cloud,
        (m) => {
          clock.t += 3_000;
          return worker(m);
        },
        () => {
          for (const [key, item] of cloud.table.hostItems) {
            queuedPeak.set(key, Math.max(queuedPeak.get(key) ?? 0, item.group?.queued ?? 0));
          }
        },
      );
      // The first batch of each host was given by hand (no start): sends after that count.
      const most = 10 + BACKLOG_TURN - 1; // the limit, and a whole turn taken when it was one short
      for (const [key, peak] of queuedPeak) assert.ok(peak <= most, `${key}: ${peak} in its group`);
      const fetched = new Set(fetcher.requests);
      for (let i = 0; i < 60; i++) assert.ok(fetched.has(`${SITE}/p${i}`), `p${i} fetched`);
      for (let i = 0; i < 7; i++) assert.ok(fetched.has(`${OTHER}/q${i}`), `q${i} fetched`);
      assert.equal(cloud.backlog.size(), 0, 'every back queue drained');
      for (const item of cloud.table.hostItems.values()) assert.equal(item.group?.queued ?? 0, 0);
    });

  for (const budget of budgets)
    it(`loses nothing when the worker dies at any step of a refill (${JSON.stringify(budget)})`, async () => {
      const steps: FaultStep[] = [
        'after-backlog',
        'after-sends',
        'after-start',
        'after-captures',
        'after-ledgers',
        'before-ack',
      ];
      for (const step of steps) {
        for (const nth of [1, 2, 3]) {
          const clock = new TestClock();
          const cloud = new MemoryCloud();
          const fetcher = new MemoryFetcher(bigSite());
          const crawl = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base, ...budget }, clock);
          cloud.frontier.sent.push(...crawl.tasks([`${SITE}/`]));
          let seen = 0;
          let killed = false;
          const fault = (at: FaultStep) => {
            if (at === step && ++seen === nth && !killed) {
              killed = true;
              throw new InjectedCrashError(at, nth);
            }
          };
          const worker = workerOver(cloud, fetcher, clock, { groupLimit: 4, fault });
          // A crashed batch is delivered again (its messages were never acknowledged).
          const run = async (messages: readonly FrontierMessage[]) => {
            clock.t += 3_000;
            try {
              return await worker(messages);
            } catch (error) {
              if (!(error instanceof InjectedCrashError)) throw error;
              return worker(messages.map((m) => ({ ...m, receiveCount: m.receiveCount + 1 })));
            }
          };
          await drain(cloud, run);
          const fetched = new Set(fetcher.requests);
          for (let i = 0; i < 60; i++) assert.ok(fetched.has(`${SITE}/p${i}`), `${step} #${nth}: p${i}`);
          assert.equal(cloud.backlog.size(), 0, `${step} #${nth}: back queues drained`);
        }
      }
    });

  it('an offer made while the holder lets its group go idle is sent, not left waiting', async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home') },
      [`${SITE}/late`]: { status: 200, body: page('late') },
    });
    const crawl = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const [seed] = crawl.tasks([`${SITE}/`]);
    const [late] = crawl.tasks([`${SITE}/late`]);
    const deps = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier };
    // The seed's group was started as every group is: its size is on the host item.
    await offerTasks(deps, [seed!], SEEDS_STARTER);
    cloud.frontier.sent.splice(0);
    // ... and an earlier holder found its back queue empty at this version: no read is due.
    const item = cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))!;
    item.group = { queued: 1, version: item.group!.version, drained: item.group!.version };
    // While the batch fetches the page (after it read the host item), another page offers /late:
    // the group is busy then, so the offer only adds to the back queue.
    let offer: Promise<number> | undefined;
    const fault = (at: FaultStep, url?: string) => {
      if (at === 'before-crawl' && url === `${SITE}/`) offer = offerTasks(deps, [late!], () => 'other page');
    };
    const worker = workerOver(cloud, fetcher, clock, { fault });
    await worker([messageFor(seed!)]);
    assert.equal(await offer, 0, 'the offer met a busy group');
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${SITE}/late`],
      'the holder read the back queue again instead of leaving the group idle',
    );
    assert.equal(cloud.backlog.size(), 0);
    assert.equal(cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))?.group?.queued, 1);
  });

  it('a page back after a crash, in one batch with the links it sent before, counts no copy of them', async () => {
    const links = ['/a', '/b', '/c'];
    const { cloud, crawl, seed, worker } = await seedCrashedOnce({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', links) },
      ...Object.fromEntries(links.map((l) => [`${SITE}${l}`, { status: 200, body: page(l) }])),
    });
    const firstSends = cloud.frontier.sent.splice(0);
    assert.equal(firstSends.length, 3, 'the links reached the group before the crash');
    // SQS gives the page back together with the links behind it in its group.
    await worker([{ ...seed, receiveCount: 2 }, ...firstSends.map((t) => messageFor(t))]);
    assert.deepEqual(cloud.frontier.sent, [], 'nothing sent again: they were in this very batch');
    assert.equal(cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))?.group?.queued, 0);
  });

  for (const form of ['busy', 'idle'])
    it(`a page back after a crash does not offer again the links whose start a holder ended (the group ${form})`, async () => {
      // a.example's root links to b.example's /x; /x links to /z (its group stays busy) or to nothing.
      // The root's batch starts b.example's idle group with /x, then dies before its ledger.
      const { cloud, fetcher, crawl, seed, worker } = await seedCrashedOnce({
        [`${SITE}/robots.txt`]: { status: 404 },
        [`${OTHER}/robots.txt`]: { status: 404 },
        [`${SITE}/`]: { status: 200, body: page('home', [`${OTHER}/x`]) },
        [`${OTHER}/x`]: { status: 200, body: page('x', form === 'busy' ? ['/z'] : []) },
        [`${OTHER}/z`]: { status: 200, body: page('z') },
      });
      const started = cloud.frontier.sent.splice(0);
      assert.deepEqual(
        started.map((t) => t.url),
        [`${OTHER}/x`],
      );
      // b.example's holder crawls /x: its ledger ends the start (and sends /z when /x links to it).
      await worker(started.map((t) => messageFor(t)));
      const behind = cloud.frontier.sent.splice(0);
      const other = () => cloud.table.hostItems.get(stateKey(crawl.id, 'b.example'))!.group!;
      assert.equal(other().queued, behind.length);
      // The root comes back: it claims /x again, and its offer is the one already made.
      await worker([{ ...seed, receiveCount: 2 }]);
      assert.deepEqual(cloud.frontier.sent, [], 'no second send of /x');
      assert.equal(cloud.backlog.size(), 0, 'no copy of /x in the back queue');
      assert.equal(other().queued, behind.length, "the group's count is its messages");
      await worker(behind.map((t) => messageFor(t)));
      assert.equal(other().queued, 0);
      assert.deepEqual(
        fetcher.requests.filter((url) => url.startsWith(OTHER) && !url.endsWith('/robots.txt')),
        form === 'busy' ? [`${OTHER}/x`, `${OTHER}/z`] : [`${OTHER}/x`],
      );
    });

  it("a redone batch that holds its first try's sends does not send them again, and takes out the turn they came from", async () => {
    const links = ['/a', '/b', '/c', '/d', '/e'];
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/`]: { status: 200, body: page('home', links) },
      ...Object.fromEntries(links.map((l) => [`${SITE}${l}`, { status: 200, body: page(l) }])),
    });
    const crawl = runningCrawl(cloud, { seeds: [`${SITE}/`], ...base }, clock);
    const deps = { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier };
    await offerTasks(deps, crawl.tasks([`${SITE}/`]), SEEDS_STARTER);
    // The second batch dies after its sends, before its ledger and before it takes its turn out.
    let batches = 0;
    const fault = (at: FaultStep) => {
      if (at === 'after-captures' && ++batches === 2) throw new InjectedCrashError(at, 2);
    };
    const worker = workerOver(cloud, fetcher, clock, { groupLimit: 1, fault });
    await worker([messageFor(cloud.frontier.sent.splice(0)[0]!)]);
    const [a] = cloud.frontier.sent.splice(0);
    assert.equal(a?.url, `${SITE}/a`, 'one message in the group; /b to /e wait in one turn');
    const first = messageFor(a!);
    await assert.rejects(worker([first]), InjectedCrashError);
    const firstTry = cloud.frontier.sent.splice(0);
    assert.deepEqual(
      firstTry.map((t) => t.url),
      ['/b', '/c', '/d', '/e'].map((l) => `${SITE}${l}`),
      'the first try sent the turn whole',
    );
    // SQS gives /a back with the first try's sends behind it, in one batch.
    await worker([{ ...first, receiveCount: 2 }, ...firstTry.map((t) => messageFor(t))]);
    assert.deepEqual(cloud.frontier.sent, [], 'nothing sent again: they are in this very batch');
    assert.equal(cloud.backlog.size(), 0, 'the turn they came from is out of the back queue');
    assert.equal(cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))?.group?.queued, 0);
  });

  it('a task a redone batch gives back, sent by its first try under the same name, waits in the back queue', async () => {
    const { clock, cloud, fetcher, crawl, tasks } = siteCrawl(['/a', '/b', '/c', '/x'], { maxPages: 10_000 });
    const [a, b, c, x] = tasks;
    // /x waits in the back queue, richer than /b and /c, poorer than /a: the batch that
    // fetches /a holds /b and /c back and gives them back to the back queue, behind /x.
    await cloud.backlog.add(crawl.id, 'a.example', [{ ...x!, cash: 0.6 }]);
    await cloud.table.noteBacklog(crawl.id, 'a.example');
    cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))!.group!.queued = 3;
    // The batch is a redo: /b and /c came in the send its first try made, named by /a's message.
    const head = messageFor({ ...a!, cash: 1 }, 2, 7_000);
    const name = `refill ${stateKey(crawl.id, 'a.example')} 7000`;
    const behind = [b!, c!].map((t, i) =>
      messageFor({ ...t, cash: 0.01, turn: resendId(name) }, 1, 7_001 + i),
    );
    const worker = workerOver(cloud, fetcher, clock);
    await worker([head, ...behind]);
    assert.deepEqual(
      fetcher.requests.filter((u) => !u.endsWith('/robots.txt')),
      [`${SITE}/a`],
      '/b and /c held back',
    );
    assert.ok(
      !cloud.frontier.sent.some((t) => t.turn === resendId(name) && (t.fp === b!.fp || t.fp === c!.fp)),
      'not sent again under the name they came in (SQS would drop them: lost)',
    );
    assert.deepEqual(
      sentOrWaiting(cloud, crawl.id).sort(),
      [`${SITE}/b`, `${SITE}/c`, `${SITE}/x`],
      'each sent or waiting, once',
    );
  });

  it('a task given back alone, whose turn of its own was taken out as stale, still waits', async () => {
    const { clock, cloud, fetcher, crawl, tasks } = siteCrawl(['/a', '/c', '/x', '/y'], { maxPages: 10_000 });
    const [a, c, x, y] = tasks;
    const poor = { ...c!, cash: 0.01 };
    // A first try sent /c and left it waiting too, alone in a turn; /x and /y wait, richer.
    await cloud.backlog.add(crawl.id, 'a.example', [poor]);
    await cloud.backlog.add(crawl.id, 'a.example', [
      { ...x!, cash: 0.45 },
      { ...y!, cash: 0.44 },
    ]);
    await cloud.table.noteBacklog(crawl.id, 'a.example');
    cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))!.group!.queued = 2;
    // The batch fetches /a, holds /c back and gives it back: it waits again, in a turn whose key is
    // the stale one's (the same task): that turn must not be taken out after the ledger.
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor({ ...a!, cash: 1 }, 2), messageFor(poor)]);
    assert.deepEqual(
      sentOrWaiting(cloud, crawl.id).sort(),
      [`${SITE}/c`, `${SITE}/x`, `${SITE}/y`],
      'each sent or waiting, once',
    );
  });

  it('a batch back after its counted ledger keeps the turn where its first try gave a task back', async () => {
    const { clock, cloud, fetcher, crawl, tasks } = siteCrawl(['/a', '/c', '/x', '/y', '/z'], {
      maxPages: 10_000,
    });
    const [a, c, x, y, z] = tasks;
    await cloud.backlog.add(crawl.id, 'a.example', [
      { ...x!, cash: 0.45 },
      { ...y!, cash: 0.44 },
    ]);
    await cloud.table.noteBacklog(crawl.id, 'a.example');
    cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))!.group!.queued = 3;
    // The batch fetches /a and gives /c back (it waits, behind /x and /y), writes its ledger, and dies.
    let crashed = false;
    const fault = (at: FaultStep) => {
      if (at === 'after-ledgers' && !crashed) {
        crashed = true;
        throw new InjectedCrashError(at, 1);
      }
    };
    const worker = workerOver(cloud, fetcher, clock, { fault });
    const batch = [messageFor({ ...a!, cash: 1 }), messageFor({ ...c!, cash: 0.01 })];
    await assert.rejects(worker(batch), InjectedCrashError);
    // Seconds later (what the crawl fetches has faded: the group may hold more), SQS gives the
    // batch back with /z behind it: the first two are acknowledged unread (the ledger counted them).
    clock.t += 10_000;
    await worker([...batch.map((m) => ({ ...m, receiveCount: 2 })), messageFor({ ...z!, cash: 0.5 })]);
    assert.ok(sentOrWaiting(cloud, crawl.id).includes(`${SITE}/c`), '/c waits or is sent');
    assert.equal(fetcher.requests.filter((u) => u === `${SITE}/a`).length, 1);
  });

  it("a copy of a URL that a crash left in its group is dropped within the host's last fetches, fetched again beyond", async () => {
    const paths = Array.from({ length: FETCHES_REMEMBERED + 2 }, (_, i) => `/p${i}`);
    const { clock, cloud, fetcher, crawl, tasks } = siteCrawl(paths);
    const worker = workerOver(cloud, fetcher, clock);
    const finished = () => cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))?.finished ?? 0;
    // p0 and p1 are fetched by one batch; a later message of p1 (another send of it) comes next.
    await worker([messageFor(tasks[0]!), messageFor(tasks[1]!)]);
    await worker([messageFor({ ...tasks[1]!, turn: 'another send' })]);
    assert.equal(fetcher.requests.filter((u) => u === `${SITE}/p1`).length, 1, 'the copy is not fetched');
    assert.equal(finished(), 2, 'nor counted');
    // The host fetches FETCHES_REMEMBERED more pages, one batch each: p0 and p1 fall out of the ring.
    for (const t of tasks.slice(2)) await worker([messageFor(t)]);
    assert.deepEqual(
      cloud.table.hostItems.get(stateKey(crawl.id, 'a.example'))?.recentlyFetched?.length,
      FETCHES_REMEMBERED,
    );
    await worker([messageFor({ ...tasks[0]!, turn: 'a late send' })]);
    assert.equal(
      fetcher.requests.filter((u) => u === `${SITE}/p0`).length,
      2,
      'a copy further behind is fetched once more',
    );
  });

  it("the first batch of a just-started group does not send again the starter's turn still in the back queue", async () => {
    const clock = new TestClock();
    const cloud = new MemoryCloud();
    const fetcher = new MemoryFetcher({
      [`${SITE}/robots.txt`]: { status: 404 },
      [`${SITE}/1`]: { status: 200, body: page('one', ['/new']) },
      [`${SITE}/new`]: { status: 200, body: page('new') },
    });
    const crawl = runningCrawl(cloud, { seeds: [`${SITE}/1`], ...base }, clock);
    const turn = crawl.tasks([1, 2, 3].map((n) => `${SITE}/${n}`));
    // A starter won the group and sent its turn; its removal from the back queue is not done yet.
    await cloud.backlog.add(crawl.id, 'a.example', turn);
    await cloud.table.noteBacklog(crawl.id, 'a.example');
    await cloud.table.startGroup(crawl.id, 'a.example', 3, 'starter');
    const worker = workerOver(cloud, fetcher, clock);
    await worker([messageFor(turn[0]!)]);
    assert.deepEqual(
      cloud.frontier.sent.map((t) => t.url),
      [`${SITE}/new`],
      'its own new link only: /2 and /3 are in the group already',
    );
  });

  it('two admissions of the same parked URLs at once send each of them once', async () => {
    const cloud = new MemoryCloud();
    const parked = [1, 2, 3].map((n) => task(`${SITE}/p${n}`, n));
    for (const t of parked) cloud.parked.entries.set(`c1#${t.fp}`, { task: t, key: t.cash });
    const deps = {
      parked: cloud.parked,
      frontier: new BackQueueFrontier(
        { table: cloud.table, backlog: cloud.backlog, queue: cloud.frontier },
        ADMIT_STARTER,
      ),
      table: cloud.table,
    };
    const entries = await cloud.parked.richest('c1', 10);
    const [one, two] = await Promise.all([
      admitParked(deps, 'c1', entries),
      admitParked(deps, 'c1', entries),
    ]);
    assert.equal(one + two, 3, 'each URL unparked once');
    const offered = [
      ...cloud.frontier.sent,
      ...[...cloud.backlog.queues.values()].flatMap((q) => [...q.values()].flatMap((t) => t.tasks)),
    ];
    assert.deepEqual(offered.map((t) => t.url).sort(), parked.map((t) => t.url).sort(), 'each offered once');
  });
});
