/**
 * The embedded crawler judges an error raised while crawling a URL (an adapter failure, a bug; not
 * a network problem, which the crawl step returns as an outcome) with the error policy the cloud
 * worker uses (functions/core/step/error-policy.ts): worth another try, the task goes back with its
 * attempt counted, up to maxRetries; not worth it (the error says `retryable: false`), the URL is
 * recorded as `internal-error` at once, with the error's name and message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { UndiciFetcher } from '../../functions/adapters/http/undici-fetcher.ts';
import type { Fetcher, FetchRequest } from '../../functions/core/ports.ts';
import type { FetchedPage } from '../../functions/core/step/crawl-page.ts';
import type { SiteServer } from '../fixtures/site-server.ts';
import { closeAll, siteRoutes, startSites } from '../fixtures/sites.ts';
import { crawl, pagePaths } from './helpers.ts';

/** Fetches through undici, but throws for the paths it is told to, as an adapter or a bug would. */
class ThrowingFetcher implements Fetcher {
  readonly thrown: string[] = [];
  readonly #inner = new UndiciFetcher({
    userAgent: 'crawlstack-test',
    allowPrivate: true,
    connectTimeoutMs: 5000,
    headersTimeoutMs: 5000,
    idleTimeoutMs: 5000,
    totalTimeoutMs: 10_000,
  });
  readonly #throws: (path: string, times: number) => Error | undefined;
  constructor(throws: (path: string, times: number) => Error | undefined) {
    this.#throws = throws;
  }
  async fetch(request: FetchRequest) {
    const path = new URL(request.url).pathname;
    const error = this.#throws(path, this.thrown.filter((p) => p === path).length);
    if (error !== undefined) {
      this.thrown.push(path);
      throw error;
    }
    return this.#inner.fetch(request);
  }
  async close() {
    await this.#inner.close();
  }
}

describe('embedded crawler: the shared error policy', () => {
  let site: SiteServer;
  before(async () => {
    [site] = (await startSites(['127.0.0.93'], () => [
      siteRoutes({
        '/': { title: 'home', links: ['/flaky', '/permanent', '/bug'] },
        '/flaky': { title: 'flaky' },
        '/permanent': { title: 'permanent' },
        '/bug': { title: 'bug' },
        '/parent': { title: 'parent', links: ['/child/1', '/child/2'] },
        '/child/1': { title: 'child 1' },
        '/child/2': { title: 'child 2' },
      }),
    ])) as [SiteServer];
  });
  after(() => closeAll([site]));

  test('retries what is worth it, up to maxRetries; records the rest at once', async () => {
    const fetcher = new ThrowingFetcher((path, times) => {
      if (path === '/flaky' && times === 0) return new Error('socket pool in a bad state');
      if (path === '/permanent') {
        return Object.assign(new Error('this store refuses the page'), {
          code: 'STORE_REFUSED',
          retryable: false,
        });
      }
      if (path === '/bug') return new TypeError("Cannot read properties of undefined (reading 'x')");
      return undefined;
    });
    try {
      const run = await crawl({ seeds: [`${site.origin}/`], maxRetries: 2 }, { fetcher });
      assert.deepEqual(pagePaths(site).sort(), ['/', '/flaky'], 'the flaky page fetched on its retry');
      assert.equal(run.page(`${site.origin}/flaky`)?.status, 200);
      const permanent = run.page(`${site.origin}/permanent`);
      assert.equal(permanent?.reason, 'internal-error');
      assert.equal(permanent?.detail, 'Error: this store refuses the page');
      const bug = run.page(`${site.origin}/bug`);
      assert.equal(bug?.reason, 'internal-error');
      assert.match(bug?.detail ?? '', /^TypeError: Cannot read properties/);
      assert.deepEqual(
        fetcher.thrown.sort(),
        ['/bug', '/bug', '/bug', '/flaky', '/permanent'],
        'the bug tried 1 + maxRetries times, the permanent error once',
      );
      assert.equal(run.summary.retries, 3, 'the flaky retry and two of the bug');
    } finally {
      await fetcher.close();
    }
  });

  test('a step that throws after claiming its links: its retry queues them', async () => {
    // The step claimed the page's links, then failed (onPage stands for any part of the step
    // after the links: an adapter or a bug); the claims of a step that is not committed must
    // not keep its retry from queueing them.
    let thrown = 0;
    const onPage = (page: FetchedPage) => {
      if (new URL(page.task.url).pathname === '/parent' && thrown++ === 0) {
        throw new Error('the page handler failed once');
      }
      return undefined;
    };
    const run = await crawl({ seeds: [`${site.origin}/parent`], maxRetries: 2 }, { onPage });
    assert.equal(thrown, 2, 'the page was handled again on its retry');
    assert.equal(run.page(`${site.origin}/parent`).status, 200);
    assert.equal(run.page(`${site.origin}/child/1`).status, 200);
    assert.equal(run.page(`${site.origin}/child/2`).status, 200);
    assert.equal(run.summary.queued, 0);
  });
});
