/**
 * Cloud recrawls with the in-memory fakes: the archive's fold (idempotent per round), the
 * look-up a round's step makes, and POST /crawls/{id}/recrawl (plan, link, conflicts, refusals).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApiApp } from '../../../functions/cloud/lambdas/api/api-app.ts';
import type { PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import { archiveRevisits, foldVisits } from '../../../functions/cloud/use-cases/archive-visits.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { fingerprint } from '../../../functions/core/url/fingerprint.ts';
import { MemoryCloud } from './memory-cloud.ts';

const ORIGIN = 'https://example.com';
const DIGEST = `sha1:${'A'.repeat(32)}`;

function item(path: string, extra: Partial<PageItem> = {}): PageItem {
  const url = `${ORIGIN}${path}`;
  return {
    fp: fingerprint(url),
    url,
    host: 'example.com',
    status: 200,
    kind: 'page',
    depth: path === '/' ? 0 : 1,
    bytes: 10,
    outLinks: 0,
    fetchedAt: '2026-11-01T00:00:00.000Z',
    contentHash: `hash-${path}`,
    contentType: 'text/html',
    messageId: 'm',
    enqueued: 0,
    warc: { bucket: 'b', key: `warc/first/${path.length}.warc.gz`, offset: 10, length: 20 },
    ...extra,
  };
}

async function firstCrawl(cloud: MemoryCloud, id: string, paths: string[]): Promise<void> {
  const parsed = parseCrawlConfig({ seeds: [`${ORIGIN}/`], keepArchive: true });
  if (!parsed.ok) throw new Error(parsed.problems.join());
  await cloud.table.createCrawl({
    id,
    status: 'done',
    createdAt: '2026-11-01T00:00:00.000Z',
    config: parsed.config,
    seeds: 1,
  });
  await foldVisits(
    cloud.archives,
    id,
    id,
    paths.map((path) => ({
      page: item(path, path === '/a' ? { etag: '"v1"' } : {}),
      links: path === '/' ? [{ url: `${ORIGIN}/a`, kind: 'page' as const }] : [],
      payloadDigest: DIGEST,
    })),
    true,
  );
}

describe('cloud archive state', () => {
  it('folds a round once, however often its capture comes, and looks pages up as before the round', async () => {
    const cloud = new MemoryCloud();
    await firstCrawl(cloud, 'first', ['/', '/a']);
    const lookup = archiveRevisits(cloud.archives, 'first', 'round-1');
    const before = await lookup.previous(`${ORIGIN}/a`);
    assert.deepEqual(before?.validators, { etag: '"v1"' });
    assert.deepEqual(before?.copy, { date: '2026-11-01T00:00:00.000Z', payloadDigest: DIGEST });
    const revisit = {
      page: item('/a', { fetchedAt: '2026-11-08T00:00:00.000Z', change: 'not-modified' as const }),
    };
    await foldVisits(cloud.archives, 'first', 'round-1', [revisit], false);
    await foldVisits(cloud.archives, 'first', 'round-1', [revisit], false); // redelivered
    const [page] = (await cloud.archives.pages('first')).filter((p) => p.url.endsWith('/a'));
    assert.equal(page?.history.visits, 1, 'one revisit, not two');
    assert.equal(page?.history.changes, 0, 'a 304 is never a change');
    assert.equal(page?.copy?.ref?.file, 'warc/first/2.warc.gz', "the 304 keeps the first crawl's copy");
    // The round's own retry sees the archive as it was before the round.
    assert.deepEqual(await lookup.previous(`${ORIGIN}/a`), before);
    assert.equal(await lookup.previous(`${ORIGIN}/never`), undefined);
  });
});

describe('POST /crawls/{id}/recrawl', () => {
  const ids = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];

  async function setup() {
    const cloud = new MemoryCloud();
    const first = '00000000-0000-4000-8000-000000000001';
    await firstCrawl(cloud, first, ['/', '/a', '/b']);
    let n = 0;
    const app = createApiApp(cloud.apiDeps({ now: () => Date.UTC(2026, 11, 1) }, () => ids[n++]!));
    const post = async (id: string, body?: unknown) => {
      const response = await app.request(`/crawls/${id}/recrawl`, {
        method: 'POST',
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    return { cloud, first, post };
  }

  it('starts a round: a crawl linked to the archive, seeded by the plan, the rest seen and not queued', async () => {
    const { cloud, first, post } = await setup();
    const started = await post(first, { recrawlBudget: 2, recrawlSchedule: 'uniform' });
    assert.equal(started.status, 201, JSON.stringify(started.json));
    assert.equal(started.json.id, ids[0]);
    assert.deepEqual(started.json.recrawl, {
      archive: first,
      round: 1,
      from: first,
      schedule: 'uniform',
      budget: 2,
      known: 3,
      planned: 2,
    });
    const round = await cloud.table.getCrawl(ids[0]!);
    assert.equal(round?.status, 'running');
    assert.equal(round?.config.maxPages, 2, 'the budget is the round’s page budget');
    assert.equal(round?.recrawl?.archive, first);
    const queued = cloud.frontier.sent.filter((t) => t.crawlId === ids[0]);
    assert.equal(queued.length, 2);
    const owners = cloud.owners.get(ids[0]!);
    assert.equal(owners?.size, 3, 'the page left out is claimed (seen) too');
    // A round runs: no second one, from the crawl or from the round.
    assert.equal((await post(first)).status, 409);
    assert.equal((await post(ids[0]!)).status, 409);
  });

  it('refuses what it cannot do, with the reason', async () => {
    const { cloud, first, post } = await setup();
    assert.equal((await post('99999999-9999-4999-8999-999999999999')).status, 404);
    const seeds = await post(first, { seeds: ['https://other.example/'] });
    assert.equal(seeds.status, 400);
    assert.match(String((seeds.json.problems as string[])[0]), /^seeds: /);
    const bad = await post(first, { recrawlSchedule: 'sometimes' });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.json.problems), /recrawlSchedule/);
    const crawl = await cloud.table.getCrawl(first);
    cloud.table.crawls.set(first, { ...crawl!, status: 'running' });
    const running = await post(first);
    assert.equal(running.status, 409);
    assert.match(String(running.json.error), /still running/);
    // A crawl that did not keep its archive state (the default: it costs a write per page).
    cloud.table.crawls.set(first, {
      ...crawl!,
      status: 'done',
      config: { ...crawl!.config, keepArchive: false },
    });
    const kept = await post(first);
    assert.equal(kept.status, 409);
    assert.match(String(kept.json.error), /keepArchive/);
  });
});
