import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { BodyBudget, type ReleaseShare } from '../../../functions/adapters/http/body-budget.ts';
import { withBodyShareScope } from '../../../functions/adapters/http/body-share-scope.ts';
import { type FetcherOptions, UndiciFetcher } from '../../../functions/adapters/http/undici-fetcher.ts';
import type { FetchResult } from '../../../functions/core/ports.ts';
import { ok } from '../../fixtures/fetch-results.ts';
import { routes, type SiteServer, startSite } from '../../fixtures/site-server.ts';

const KiB = 1024;
const THRESHOLD = 64 * KiB;
const CAP = 1024 * KiB;

const OPTIONS: FetcherOptions = {
  userAgent: 'crawlstack-test/1 (+https://example.test/bot)',
  allowPrivate: true,
  connectTimeoutMs: 500,
  headersTimeoutMs: 1000,
  idleTimeoutMs: 1000,
  totalTimeoutMs: 5000,
  maxConnections: 4,
};

/** A budget of one cap (one large-body slot) that logs its claims, grants and releases in order. */
class LoggedBudget extends BodyBudget {
  readonly log: string[] = [];
  #claims = 0;

  constructor() {
    super({ budgetBytes: CAP, thresholdBytes: THRESHOLD });
  }

  override claim(bytes: number, granted: () => void): ReleaseShare {
    const n = ++this.#claims;
    this.log.push(`claim ${n}`);
    const release = super.claim(bytes, () => {
      this.log.push(`grant ${n}`);
      granted();
    });
    return () => {
      if (!this.log.includes(`release ${n}`)) this.log.push(`release ${n}`);
      release();
    };
  }
}

const BIG = Buffer.alloc(512 * KiB, 'b');
const TEXT = Buffer.from('<p>a compressible paragraph of the page</p>\n'.repeat(14_000)); // 616 KB

/** 200 KiB at once (past the threshold), then 1 KiB every 100 ms for `ms`, then the end. */
function trickle(ms: number) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write(Buffer.alloc(200 * KiB, 't'));
    const started = Date.now();
    const timer = setInterval(() => {
      if (ms >= 0 && Date.now() - started >= ms) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(Buffer.alloc(KiB, 't'));
    }, 100);
    res.on('close', () => clearInterval(timer));
  };
}

async function until(what: string, check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('UndiciFetcher with a shared body budget', () => {
  let site: SiteServer;
  const url = (path: string) => `${site.origin}${path}`;

  before(async () => {
    site = await startSite(
      routes({
        '/big': { body: BIG },
        '/big-2': { body: BIG },
        '/gzip': (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
          res.end(gzipSync(TEXT));
        },
        '/small': { body: Buffer.alloc(10 * KiB, 's') },
        '/over-cap': { body: Buffer.alloc(CAP + 300 * KiB, 'o') },
        '/hold-600': trickle(600),
        '/hold-1200': trickle(1200),
        '/hold-forever': trickle(-1),
      }),
    );
  });

  after(async () => {
    await site.close();
  });

  /**
   * Runs `test` with a fetcher on a one-slot budget, after a body from `holdPath` took the slot and
   * one from `waitPath` queued for it.
   */
  async function withWaiter(
    paths: { hold: string; wait: string },
    test: (t: {
      budget: LoggedBudget;
      fetcher: UndiciFetcher;
      holder: Promise<FetchResult>;
      waiter: Promise<FetchResult>;
      waitingSince: number;
    }) => Promise<void>,
    options: Partial<FetcherOptions> = {},
  ): Promise<void> {
    const budget = new LoggedBudget();
    const fetcher = new UndiciFetcher({ ...OPTIONS, ...options, bodyBudget: budget });
    try {
      const holder = fetcher.fetch({ url: url(paths.hold), maxBytes: CAP });
      await until('the first body to hold the slot', () => budget.holders === 1);
      const waitingSince = Date.now();
      const waiter = fetcher.fetch({ url: url(paths.wait), maxBytes: CAP });
      await until('the second body to wait', () => budget.waiting === 1);
      await test({ budget, fetcher, holder, waiter, waitingSince });
    } finally {
      await fetcher.close();
    }
  }

  it('reads two large bodies one after the other with one slot, and both complete', () =>
    withWaiter({ hold: '/hold-600', wait: '/big' }, async ({ budget, holder, waiter }) => {
      const [first, second] = [ok(await holder), ok(await waiter)];
      assert.equal(first.truncated, undefined);
      assert.equal(second.truncated, undefined);
      assert.equal(first.body.length, 200 * KiB + 5 * KiB, 'five 1 KiB writes in 600 ms');
      assert.deepEqual(Buffer.from(second.body), BIG);
      assert.deepEqual(budget.log, ['claim 1', 'grant 1', 'claim 2', 'release 1', 'grant 2', 'release 2']);
      assert.equal(budget.heldBytes, 0);
    }));

  it('makes a gzip body that decodes past the threshold wait too, then keeps all of it', () =>
    withWaiter({ hold: '/hold-600', wait: '/gzip' }, async ({ budget, holder, waiter }) => {
      ok(await holder);
      assert.deepEqual(Buffer.from(ok(await waiter).body), TEXT);
      assert.equal(budget.heldBytes, 0);
    }));

  it('never delays a small body behind large ones waiting for a slot', () =>
    withWaiter({ hold: '/hold-1200', wait: '/big' }, async ({ budget, fetcher, holder, waiter }) => {
      const small = ok(await fetcher.fetch({ url: url('/small'), maxBytes: CAP }));
      assert.equal(small.body.length, 10 * KiB);
      assert.equal(budget.waiting, 1, 'the large body still waits: the small one went past it');
      assert.equal(budget.log.filter((e) => e.startsWith('claim')).length, 2, 'no claim for a small body');
      await Promise.all([holder, waiter]);
    }));

  it('does not fail a body paused for a slot with the idle timeout', () =>
    withWaiter(
      { hold: '/hold-1200', wait: '/big-2' },
      async ({ holder, waiter, waitingSince }) => {
        const second = ok(await waiter);
        assert.ok(Date.now() - waitingSince > 600, 'the body waited for longer than the idle timeout');
        assert.equal(second.truncated, undefined);
        assert.deepEqual(Buffer.from(second.body), BIG);
        ok(await holder);
      },
      { idleTimeoutMs: 300 },
    ));

  it('ends a body stuck waiting at its total timeout, and withdraws its claim', async () => {
    const budget = new LoggedBudget();
    // Two fetchers, one budget: as the worker's fetchers for different crawl settings share it.
    const patient = new UndiciFetcher({ ...OPTIONS, totalTimeoutMs: 2500, bodyBudget: budget });
    const hasty = new UndiciFetcher({ ...OPTIONS, totalTimeoutMs: 700, bodyBudget: budget });
    try {
      const holder = patient.fetch({ url: url('/hold-forever'), maxBytes: CAP });
      await until('the first body to hold the slot', () => budget.holders === 1);
      const waited = ok(await hasty.fetch({ url: url('/big'), maxBytes: CAP }));
      assert.equal(waited.truncated, 'time');
      assert.equal(waited.body.length, THRESHOLD, 'it kept the threshold while it waited');
      assert.equal(budget.waiting, 0, 'the claim was withdrawn');
      assert.equal(budget.holders, 1);
      assert.equal(ok(await holder).truncated, 'time');
      assert.equal(budget.heldBytes, 0, 'the holder gave its slot back at its own timeout');
      assert.deepEqual(budget.log, ['claim 1', 'grant 1', 'claim 2', 'release 2', 'release 1']);
    } finally {
      await Promise.all([patient.close(), hasty.close()]);
    }
  });

  it('gives the slot back when the body reaches its cap', async () => {
    const budget = new LoggedBudget();
    const fetcher = new UndiciFetcher({ ...OPTIONS, bodyBudget: budget });
    try {
      const capped = ok(await fetcher.fetch({ url: url('/over-cap'), maxBytes: CAP }));
      assert.equal(capped.truncated, 'length');
      assert.equal(capped.body.length, CAP);
      assert.deepEqual(budget.log, ['claim 1', 'grant 1', 'release 1']);
      assert.equal(budget.heldBytes, 0);
    } finally {
      await fetcher.close();
    }
  });

  it("keeps a large body's share until the crawl step that fetched it ends", async () => {
    const budget = new LoggedBudget();
    const fetcher = new UndiciFetcher({ ...OPTIONS, bodyBudget: budget });
    try {
      await withBodyShareScope(async () => {
        const page = ok(await fetcher.fetch({ url: url('/big'), maxBytes: CAP }));
        assert.equal(page.body.length, BIG.length);
        await new Promise((resolve) => setTimeout(resolve, 20)); // the step parses, stores...
        assert.equal(budget.holders, 1, 'the share pays for the step, not only the transfer');
        ok(await fetcher.fetch({ url: url('/small'), maxBytes: CAP }));
      });
      assert.equal(budget.heldBytes, 0, 'given back when the step ended');
      assert.deepEqual(budget.log, ['claim 1', 'grant 1', 'release 1']);
    } finally {
      await fetcher.close();
    }
  });

  it("gives a step's first share back when the same step fetches again, so it never waits on itself", async () => {
    const budget = new LoggedBudget();
    const fetcher = new UndiciFetcher({ ...OPTIONS, totalTimeoutMs: 1500, bodyBudget: budget });
    try {
      await withBodyShareScope(async () => {
        ok(await fetcher.fetch({ url: url('/big'), maxBytes: CAP }));
        const again = ok(await fetcher.fetch({ url: url('/big-2'), maxBytes: CAP }));
        assert.equal(again.truncated, undefined, 'with one slot, it would wait for its own share');
      });
      assert.deepEqual(budget.log, ['claim 1', 'grant 1', 'release 1', 'claim 2', 'grant 2', 'release 2']);
    } finally {
      await fetcher.close();
    }
  });
});
