import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  DynamoSeenLog,
  type DynamoSeenLogOptions,
  seenLogCache,
  seenLogPartition,
  unpackFingerprints,
} from '../../functions/adapters/aws/dynamo-seen-log.ts';
import { retentionOf } from '../../functions/adapters/aws/retention.ts';
import type { SeenStore } from '../../functions/core/ports.ts';
import { MemoryCloud } from '../unit/cloud/memory-cloud.ts';
import { awsSuite } from './aws-suite.ts';
import { type LocalBackend, openLocalBackend } from './backends.ts';
import { ownedSeenStoreContract, seenStoreContract } from './seen-store.contract.ts';

describe("SeenStore contract: MemorySeenStore (the unit tests' fake of the UrlTable)", () => {
  const cloud = new MemoryCloud();
  // Two containers' views of one crawl's claims.
  seenStoreContract(async () => ({ a: cloud.seen('crawl-1'), b: cloud.seen('crawl-1') }));
  ownedSeenStoreContract(async () => ({ a: cloud.seen('crawl-1'), b: cloud.seen('crawl-1') }));
});

describe('SeenStore contract: StepUnit (the embedded crawler, one step per call)', () => {
  let local: LocalBackend;
  before(() => {
    local = openLocalBackend();
  });
  after(() => local.close());
  const store = (): SeenStore => ({
    claim: (fps, owner) => local.step((unit) => unit.claim(fps, owner)),
  });
  seenStoreContract(async () => ({ a: store(), b: store() }));
});

describe('SeenStore contract: DynamoSeenLog (URL-seen by host, chunks in the crawl table)', () => {
  const backend = awsSuite(async (aws) => ({ doc: aws.clients.doc, table: await aws.crawlTable() }));
  let doc: DynamoDBDocumentClient;
  let table: string;
  before(async () => {
    ({ doc, table } = await backend());
  });
  const log = (crawlId = 'crawl-1', options: DynamoSeenLogOptions = {}) =>
    new DynamoSeenLog(doc, table, crawlId, options);
  seenStoreContract(async () => ({ a: log(), b: log() }));
  ownedSeenStoreContract(async () => ({ a: log(), b: log() }));

  /** The chunks of a host's log: owner and fingerprints of each, in order. */
  async function chunks(
    crawlId: string,
    host: string,
  ): Promise<{ owner: unknown; fps: string[]; expiresAt: unknown }[]> {
    const response = await doc.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': seenLogPartition(crawlId, host) },
        ConsistentRead: true,
      }),
    );
    return (response.Items ?? []).map((item) => ({
      owner: item.owner,
      fps: unpackFingerprints(item.fps as Uint8Array),
      expiresAt: item.expiresAt,
    }));
  }

  it("writes one chunk per claim and host: a page's new links cost one write per host", async () => {
    const store = log('crawl-chunks', { retention: retentionOf(90, { now: () => 1_000_000 }) });
    const fps = Array.from({ length: 40 }, (_, i) => (0xab00 + i).toString(16).padStart(16, '0'));
    const hosts = fps.map((_, i) => (i < 30 ? 'a.example' : 'b.example'));
    assert.deepEqual(await store.claim(fps, 'page-1', { hosts }), Array(40).fill(true));
    const a = await chunks('crawl-chunks', 'a.example');
    assert.deepEqual(a, [{ owner: 'page-1', fps: fps.slice(0, 30), expiresAt: 1_000 + 90 * 86_400 }]);
    assert.equal((await chunks('crawl-chunks', 'b.example')).length, 1);
    // Nothing new: no write at all.
    assert.deepEqual(await store.claim(fps, 'page-2', { hosts }), Array(40).fill(false));
    assert.equal((await chunks('crawl-chunks', 'a.example')).length, 1);
  });

  it('a container whose view of the log is stale loses the append, rereads, and answers what others claimed', async () => {
    const a = log('crawl-stale');
    const b = log('crawl-stale');
    const host = ['s.example'];
    assert.deepEqual(await b.claim(['000000000000f001'], 'page-b', { hosts: host }), [true]); // b has read the log
    assert.deepEqual(await a.claim(['000000000000f002'], 'page-a', { hosts: host }), [true]); // a appended chunk 1
    // b thinks chunk 1 is free: its append fails, it reads chunk 1 and finds f002 is a's.
    const answers = await b.claim(['000000000000f002', '000000000000f003'], 'page-b', {
      hosts: [host[0]!, host[0]!],
    });
    assert.deepEqual(answers, [false, true]);
    assert.equal(b.ownerOf('000000000000f002'), 'page-a');
    assert.deepEqual(
      (await chunks('crawl-stale', 's.example')).map((c) => c.fps),
      [['000000000000f001'], ['000000000000f002'], ['000000000000f003']],
    );
  });

  it('two claims of one container racing for the same chunk leave its view whole (no chunk skipped)', async () => {
    // Claim A's append of chunk 1 lands first, but its answer reaches the container only after
    // claim B lost the same chunk and read it back: the container must still read chunk 2 later.
    let firstPut: Promise<unknown> | undefined;
    let releaseA!: () => void;
    const aAnswered = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    let armed = false;
    let puts = 0;
    const racing = {
      send: async (command: unknown) => {
        if (armed && command instanceof PutCommand && puts++ < 2) {
          if (firstPut === undefined) {
            firstPut = doc.send(command);
            const result = await firstPut;
            await aAnswered;
            return result;
          }
          await firstPut.catch(() => undefined); // B's append reaches the table after A's
        }
        const result = await doc.send(command as QueryCommand);
        if (armed && command instanceof QueryCommand && puts >= 2) setTimeout(releaseA, 5);
        return result;
      },
    } as unknown as DynamoDBDocumentClient;
    const host = ['race.example'];
    const a = new DynamoSeenLog(racing, table, 'crawl-race');
    assert.deepEqual(await a.claim(['000000000000a000'], 'page-0', { hosts: host }), [true]); // reads the log
    armed = true;
    const [first, second] = await Promise.all([
      a.claim(['000000000000a001'], 'page-a', { hosts: host }),
      a.claim(['000000000000a002'], 'page-b', { hosts: host }),
    ]);
    assert.deepEqual([first, second], [[true], [true]]);
    // Another container appends chunk 3 (after 0, 1, 2); this one must find it, not claim over it.
    assert.deepEqual(await log('crawl-race').claim(['000000000000a003'], 'page-c', { hosts: host }), [true]);
    assert.deepEqual(await a.claim(['000000000000a003'], 'page-d', { hosts: host }), [false]);
    assert.equal(a.ownerOf('000000000000a003'), 'page-c');
    const owners = (await chunks('crawl-race', 'race.example')).map((c) => c.owner);
    assert.deepEqual(owners, ['page-0', 'page-a', 'page-b', 'page-c']);
  });

  it('a claim that waited at its gate while another claim of the container took a URL does not claim it again', async () => {
    const a = log('crawl-gate');
    const host = ['gate.example'];
    const both = ['000000000000b001', '000000000000b002'];
    assert.deepEqual(await a.claim(['000000000000b000'], 'page-0', { hosts: host }), [true]); // reads the log
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    // Page 2 finds b001 and b002 unclaimed, then waits at its content gate; page 1 claims b001.
    const second = a.claim(both, 'page-2', {
      hosts: [host[0]!, host[0]!],
      gate: () => opened.then(() => true),
    });
    assert.deepEqual(await a.claim(['000000000000b001'], 'page-1', { hosts: host }), [true]);
    open();
    assert.deepEqual(await second, [false, true], "b001 is page 1's now");
    const fps = (await chunks('crawl-gate', 'gate.example')).flatMap((c) => c.fps);
    assert.deepEqual(
      fps,
      ['000000000000b000', '000000000000b001', '000000000000b002'],
      'each URL in one chunk',
    );
  });

  it('a redelivered page finds its claims through a container that never read the log', async () => {
    const fps = ['000000000000e001', '000000000000e002'];
    const hosts = ['r.example', 'r.example'];
    assert.deepEqual(await log('crawl-redelivery').claim(fps, 'message-7', { hosts }), [true, true]);
    assert.deepEqual(await log('crawl-redelivery').claim(fps, 'message-7', { hosts }), [true, true]);
    assert.deepEqual(await log('crawl-redelivery').claim(fps, 'message-8', { hosts }), [false, false]);
  });

  it('keeps answering right when it drops the logs it read (the bound on its memory)', async () => {
    const store = log('crawl-bounded', { logs: seenLogCache(3) });
    const fps = Array.from({ length: 8 }, (_, i) => (0xd000 + i).toString(16).padStart(16, '0'));
    const hosts = fps.map((_, i) => `k${i % 2}.example`);
    assert.deepEqual(await store.claim(fps, 'page-1', { hosts }), Array(8).fill(true));
    assert.deepEqual(await store.claim(fps, 'page-2', { hosts }), Array(8).fill(false));
    assert.deepEqual(await store.claim(fps, 'page-1', { hosts }), Array(8).fill(true));
  });

  it('keeps crawls apart: a URL seen in one crawl is new in another', async () => {
    const hosts = { hosts: ['x.example'] };
    assert.deepEqual(await log('crawl-a').claim(['00000000000000aa'], 'ffffffffffffffff', hosts), [true]);
    assert.deepEqual(await log('crawl-b').claim(['00000000000000aa'], 'eeeeeeeeeeeeeeee', hosts), [true]);
  });

  it('refuses a claim without hosts, or a malformed fingerprint, with a message that says so', async () => {
    await assert.rejects(log().claim(['000000000000c001'], 'page'), /1 fingerprints need as many hosts/);
    await assert.rejects(
      log().claim(['not-a-fp'], 'page', { hosts: ['x.example'] }),
      /not a URL fingerprint: not-a-fp/,
    );
  });

  describe('with closed logs (a host past its log limit claims URL by URL)', () => {
    // A limit of 2: the contract's claims close their hosts' logs and go on URL by URL.
    const log = (crawlId = 'crawl-closing', logLimit = 2) =>
      new DynamoSeenLog(doc, table, crawlId, { logLimit });
    seenStoreContract(async () => ({ a: log(), b: log() }));
    ownedSeenStoreContract(async () => ({ a: log(), b: log() }));

    const fps = (base: number, n: number) =>
      Array.from({ length: n }, (_, i) => (base + i).toString(16).padStart(16, '0'));
    const on = (host: string, n: number) => ({ hosts: Array(n).fill(host) as string[] });

    it('a log closes at its limit: the first URLs stay in it, the rest are claimed one by one, once each', async () => {
      const a = log('crawl-close-1', 3);
      const b = log('crawl-close-1', 3);
      const first = fps(0xf100, 2);
      const later = fps(0xf200, 4);
      assert.deepEqual(await a.claim(first, 'page-1', on('big.example', 2)), [true, true]);
      assert.deepEqual(
        await a.claim(later, 'page-2', on('big.example', 4)),
        [true, true, true, true],
        'past the limit',
      );
      // b never read the log: it reads it whole, closing chunk included, and finds both kinds of claims.
      assert.deepEqual(
        await b.claim([...first, ...later], 'page-3', on('big.example', 6)),
        Array(6).fill(false),
      );
      assert.equal(b.ownerOf(first[0]!), 'page-1');
      assert.equal(b.ownerOf(later[3]!), 'page-2');
      // The owner's redelivery still finds its claims, through either store.
      assert.deepEqual(await b.claim(later, 'page-2', on('big.example', 4)), [true, true, true, true]);
      assert.deepEqual(await a.claim(first, 'page-1', on('big.example', 2)), [true, true]);
      const chunks = await doc.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': seenLogPartition('crawl-close-1', 'big.example') },
          ConsistentRead: true,
        }),
      );
      assert.deepEqual(
        chunks.Items?.map((c) => c.closed === true),
        [false, true],
        'one chunk of claims, then the closing one: nothing is appended after it',
      );
    });

    it('a container whose view predates the closing finds it at its next append, and claims URL by URL', async () => {
      const a = log('crawl-close-2', 2);
      const b = log('crawl-close-2', 2);
      assert.deepEqual(await b.claim(fps(0xe100, 1), 'page-b', on('h.example', 1)), [true]); // b has read the log
      assert.deepEqual(await a.claim(fps(0xe200, 3), 'page-a', on('h.example', 3)), [true, true, true]); // a closes it
      // b appends at the closing chunk's number: refused, it rereads, sees the log closed, claims each.
      const answers = await b.claim([...fps(0xe200, 3), ...fps(0xe300, 2)], 'page-b', on('h.example', 5));
      assert.deepEqual(answers, [false, false, false, true, true]);
      const racing = fps(0xe400, 10);
      const [ra, rb] = await Promise.all([
        Promise.all(racing.map((fp) => a.claim([fp], 'page-a', on('h.example', 1)))),
        Promise.all(racing.map((fp) => b.claim([fp], 'page-b', on('h.example', 1)))),
      ]);
      for (let i = 0; i < racing.length; i++)
        assert.equal(Number(ra[i]![0]) + Number(rb[i]![0]), 1, racing[i]);
    });
  });
});
