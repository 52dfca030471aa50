/**
 * The pieces of `crawlstack cloud` that decide without the stack: where the API is and how to
 * call it (with CloudFormation on loopback for --stack), the local view of a cloud status and
 * page record, and the fingerprint set a download drops repeated URLs with. The whole path runs
 * in test/emulator/pipeline/cloud-cli.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nextLink } from '../../../functions/cli/cloud/cloud-download.ts';
import {
  CLOUD_LOCAL_FILE,
  isLoopbackUrl,
  writeCloudLocalInfo,
} from '../../../functions/cli/cloud/cloud-local-file.ts';
import { regionOfUrl, resolveTarget } from '../../../functions/cli/cloud/cloud-target.ts';
import {
  PollRate,
  pageRecordOfItem,
  progressOfView,
  summaryOfView,
} from '../../../functions/cli/cloud/cloud-views.ts';
import { formatProgress, formatSummary } from '../../../functions/cli/progress.ts';
import type { PageItem } from '../../../functions/cloud/messages/crawl-records.ts';
import type { CrawlProgressView } from '../../../functions/cloud/use-cases/crawl-progress.ts';
import { parseCrawlConfig } from '../../../functions/core/config.ts';
import { FingerprintSet } from '../../../functions/core/url-seen/fingerprint-set.ts';
import { tempDir } from '../../e2e/helpers.ts';

describe('FingerprintSet', () => {
  it('is exact: true only the first time, through growth, the all-zero fingerprint included', () => {
    const set = new FingerprintSet();
    const fps = Array.from({ length: 5000 }, () => randomBytes(8).toString('hex'));
    fps.push('0000000000000000');
    for (const fp of fps) assert.equal(set.add(fp), true, fp);
    for (const fp of fps) assert.equal(set.add(fp), false, fp);
    assert.equal(set.size, fps.length);
    // Same low word, another high word: two members.
    assert.equal(set.add('00000001abcdef01'), true);
    assert.equal(set.add('00000002abcdef01'), true);
  });
});

describe('where the API is', () => {
  const none = {};
  it("reads the region from a function URL's host name", () => {
    assert.equal(regionOfUrl('https://abcdefghij0123456789.lambda-url.eu-west-1.on.aws/'), 'eu-west-1');
    assert.equal(regionOfUrl('http://127.0.0.1:4000'), undefined);
    assert.equal(regionOfUrl('https://api.example.org/'), undefined);
  });

  it('--api, else CRAWLSTACK_API, else the cloud:local file; its token only for its own API', async () => {
    const project = tempDir();
    writeCloudLocalInfo(join(project, CLOUD_LOCAL_FILE), {
      api: 'http://127.0.0.1:4001',
      auth: 'bearer',
      token: 'file-token',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:4566',
      pid: process.pid,
    });
    const fromFile = await resolveTarget(none, {}, join(project));
    assert.deepEqual(fromFile, {
      api: 'http://127.0.0.1:4001',
      from: join(project, CLOUD_LOCAL_FILE),
      auth: { kind: 'bearer', token: 'file-token' },
    });
    const env = await resolveTarget(none, { CRAWLSTACK_API: 'http://127.0.0.1:4001/' }, project);
    assert.deepEqual(
      env.auth,
      { kind: 'bearer', token: 'file-token' },
      'the same API: the file has its token',
    );
    const flag = await resolveTarget({ api: 'https://x.lambda-url.eu-west-1.on.aws/' }, {}, project);
    assert.deepEqual(flag, {
      api: 'https://x.lambda-url.eu-west-1.on.aws',
      from: '--api',
      auth: { kind: 'sigv4', region: 'eu-west-1', regionFrom: 'the URL' },
    });
    const region = await resolveTarget(
      { api: 'https://x.lambda-url.eu-west-1.on.aws/', region: 'us-west-2', profile: 'work' },
      {},
      project,
    );
    assert.deepEqual(region.auth, {
      kind: 'sigv4',
      region: 'us-west-2',
      regionFrom: '--region',
      profile: 'work',
    });
    const token = await resolveTarget({ api: 'http://127.0.0.1:9' }, { CRAWLSTACK_TOKEN: 't' }, project);
    assert.deepEqual(token.auth, { kind: 'bearer', token: 't' });
    await assert.rejects(resolveTarget({ api: 'ftp://x/' }, {}, project), /not an http\(s\) URL/);
    await assert.rejects(resolveTarget({ api: 'http://a/', stack: 'S' }, {}, project), /give one/);
  });
});

describe('the cloud:local file is trusted only when it is surely the stand-in this user started', () => {
  const info = {
    api: 'http://127.0.0.1:4001',
    auth: 'bearer' as const,
    token: 'file-token',
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:4566',
    pid: process.pid,
  };
  const noApi = /no API given: pass --api URL/;

  it('is read from the folder the command runs in, never from a parent', async () => {
    const parent = tempDir();
    writeCloudLocalInfo(join(parent, CLOUD_LOCAL_FILE), info);
    const below = join(parent, 'a');
    mkdirSync(below);
    await assert.rejects(resolveTarget({}, {}, below), noApi);
    // Nor is its token sent to the API it names when the user names that API.
    const named = await resolveTarget({ api: 'http://127.0.0.1:4001', region: 'us-east-1' }, {}, below);
    assert.equal(named.auth.kind, 'sigv4');
  });

  it('is ignored, with a one-line warning, when others may write it, it is a link, or its API is not on loopback', async () => {
    const cases: [string, (path: string) => void, RegExp][] = [
      [
        'group-writable',
        (path) => chmodSync(path, 0o620),
        /writable by its group \(mode 620\): chmod 600 it/,
      ],
      ['world-writable', (path) => chmodSync(path, 0o602), /writable by others \(mode 602\)/],
      [
        'a symbolic link',
        (path) => {
          const real = `${path}.real`;
          renameSync(path, real);
          symlinkSync(real, path);
        },
        /not a regular file \(a symbolic link\?\)/,
      ],
      [
        'a remote API',
        (path) => writeFileSync(path, JSON.stringify({ ...info, api: 'https://attacker.example/' })),
        /its API "https:\/\/attacker\.example\/" is not on this machine/,
      ],
    ];
    for (const [name, spoil, message] of cases) {
      const project = tempDir();
      const path = join(project, CLOUD_LOCAL_FILE);
      writeCloudLocalInfo(path, info);
      spoil(path);
      const warnings: string[] = [];
      await assert.rejects(
        resolveTarget({}, {}, project, (line) => warnings.push(line)),
        noApi,
        name,
      );
      assert.equal(warnings.length, 1, name);
      assert.match(warnings[0]!, new RegExp(`^ignoring ${path.replaceAll('.', '\\.')}: `), name);
      assert.match(warnings[0]!, message, name);
    }
  });

  it('is ignored when another user owns it', {
    skip: process.getuid?.() !== 0 && 'needs root to chown',
  }, async () => {
    const project = tempDir();
    const path = join(project, CLOUD_LOCAL_FILE);
    writeCloudLocalInfo(path, info);
    chownSync(path, 4242, 4242);
    const warnings: string[] = [];
    await assert.rejects(
      resolveTarget({}, {}, project, (line) => warnings.push(line)),
      noApi,
    );
    assert.match(warnings[0]!, /owned by user 4242, not by you \(0\)/);
  });

  it('names loopback addresses only', () => {
    for (const url of ['http://127.0.0.1:4000', 'http://127.8.0.1/', 'http://localhost:1', 'http://[::1]:9/'])
      assert.equal(isLoopbackUrl(url), true, url);
    for (const url of [
      'http://10.0.0.1/',
      'https://x.lambda-url.eu-west-1.on.aws/',
      'http://127.0.0.1.evil.test/',
      'ftp://127.0.0.1/',
      'nonsense',
    ])
      assert.equal(isLoopbackUrl(url), false, url);
  });
});

describe('--stack: the ApiUrl output through CloudFormation DescribeStacks', () => {
  let server: Server;
  const requests: string[] = [];
  const saved = { ...process.env };
  before(async () => {
    // CloudFormation's query protocol, on loopback: one stack with the output, every other unknown.
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        requests.push(`${form.get('Action')} ${form.get('StackName')}`);
        res.setHeader('content-type', 'text/xml');
        if (form.get('StackName') === 'CrawlstackStack') {
          res.end(`<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">
  <DescribeStacksResult><Stacks><member>
    <StackName>CrawlstackStack</StackName><StackId>arn:aws:cloudformation:eu-west-1:1:stack/CrawlstackStack/1</StackId>
    <CreationTime>2026-11-26T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus>
    <Outputs><member><OutputKey>PageBucketName</OutputKey><OutputValue>pages</OutputValue></member>
      <member><OutputKey>ApiUrl</OutputKey><OutputValue>https://abc.lambda-url.eu-west-1.on.aws/</OutputValue></member></Outputs>
  </member></Stacks></DescribeStacksResult>
  <ResponseMetadata><RequestId>1</RequestId></ResponseMetadata>
</DescribeStacksResponse>`);
          return;
        }
        res.statusCode = 400;
        res.end(`<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">
  <Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${form.get('StackName')} does not exist</Message></Error>
  <RequestId>2</RequestId>
</ErrorResponse>`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_CLOUDFORMATION: `http://127.0.0.1:${port}`,
      AWS_ACCESS_KEY_ID: 'AKIDTEST',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_EC2_METADATA_DISABLED: 'true',
    });
  });
  after(() => {
    process.env = saved;
    server?.close();
  });

  it("reads the stack's ApiUrl output; the region comes with the URL", async () => {
    const target = await resolveTarget({ stack: 'CrawlstackStack', region: 'eu-west-1' }, {}, tempDir());
    assert.deepEqual(target, {
      api: 'https://abc.lambda-url.eu-west-1.on.aws',
      from: 'stack CrawlstackStack',
      auth: { kind: 'sigv4', region: 'eu-west-1', regionFrom: '--region' },
    });
    assert.deepEqual(requests.at(-1), 'DescribeStacks CrawlstackStack');
  });

  it('names a stack that does not exist, and the region it looked in', async () => {
    await assert.rejects(
      resolveTarget({ stack: 'Nope', region: 'eu-west-1' }, {}, tempDir()),
      (error: Error & { code?: string }) =>
        error.code === 'NO_API' &&
        /^no stack Nope in region eu-west-1 \(npx cdk deploy creates it/.test(error.message),
    );
  });
});

/** A status as GET /crawls/{id} answers it. */
function statusView(status: CrawlProgressView['status']): CrawlProgressView {
  const parsed = parseCrawlConfig({ seeds: ['https://example.org/'] });
  assert.ok(parsed.ok);
  return {
    id: '00000000-0000-4000-8000-000000000001',
    status,
    createdAt: '2026-11-26T10:00:00.000Z',
    ...(status === 'running' ? {} : { finishedAt: '2026-11-26T10:01:30.000Z' }),
    config: parsed.config,
    counters: {
      discovered: 40,
      queued: 5,
      parked: 3,
      finished: 32,
      fetched: 30,
      byStatus: { '200': 29, '404': 1 },
      failed: 1,
      byReason: { robots: 1, connect: 1 },
      linksSkipped: { scope: 9 },
      bytes: 300_000,
      hosts: 2,
      retries: 1,
      duplicates: 1,
      requests: 33,
      dlq: 0,
    },
    urlSeen: { lookups: 100, cacheHits: 80, hitRate: 0.8 },
  };
}

describe("a cloud crawl in the local crawl's terms", () => {
  it('the summary: the same lines, the cloud state, no CPU or memory line', () => {
    const text = formatSummary(summaryOfView(statusView('done'), Date.UTC(2026, 10, 26, 11), 'out/dir'));
    assert.equal(
      text,
      [
        'crawl done in 1:30',
        '  pages        30 fetched, 2 not fetched, 1 exact duplicates',
        '  by status    200: 29, 404: 1, no response: 1, not requested: 1',
        '  reasons      robots: 1, connect: 1',
        '  bytes        293.0 KiB',
        '  hosts        2',
        '  requests     33; 1 retry scheduled',
        '  discovered   40 URLs, 8 still queued',
        '  rate         0.3 pages/s',
        '  URL-seen     80.0% cache hits (80/100)',
        '  output       out/dir',
      ].join('\n'),
    );
  });

  it('the progress line of a running crawl, its rate from the polls of the last 10 s', () => {
    const rate = new PollRate();
    assert.equal(rate.add(0, 10), 0);
    assert.equal(rate.add(2000, 20), 5);
    // From the newest poll at least 10 s old (the first one until there is one).
    assert.equal(rate.add(12_000, 70), 5, '(70 - 20) pages over the 10 s since the poll at 2 s');
    assert.equal(rate.add(14_000, 70), 50 / 12, 'the poll at 2 s is still the newest one 10 s old');
    assert.equal(rate.add(22_500, 90), 20 / 10.5, '(90 - 70) over the 10.5 s since the poll at 12 s');
    const line = formatProgress(progressOfView(statusView('running'), Date.UTC(2026, 10, 26, 10, 0, 42), 4));
    assert.equal(
      line,
      '30 pages | 4.0/s | queue 8 | in flight 0 | errors 1 | skipped 2 | hosts 2 | 293.0 KiB | 0:42',
    );
  });

  it('a page record of the index as a pages.jsonl line: the local fields, order and nulls; the WARC file when it is here', () => {
    const item: PageItem = {
      fp: '0123456789abcdef',
      url: 'https://example.org/a',
      host: 'example.org',
      status: 200,
      contentType: 'text/html',
      kind: 'page',
      depth: 1,
      bytes: 10,
      fetchedAt: '2026-11-26T10:00:01.000Z',
      durationMs: 12,
      outLinks: 3,
      importance: 0.25,
      messageId: 'm',
      enqueued: 2,
      warc: { bucket: 'b', key: 'warc/c/2026/11/26/x.warc.gz', offset: 400, length: 300 },
    };
    const record = pageRecordOfItem(item, 'x.warc.gz');
    assert.deepEqual(Object.keys(record), [
      'url',
      'finalUrl',
      'status',
      'contentType',
      'kind',
      'depth',
      'bytes',
      'fetchedAt',
      'durationMs',
      'title',
      'contentHash',
      'outLinks',
      'importance',
      'warc',
    ]);
    assert.equal(record.finalUrl, item.url);
    assert.equal(record.title, null);
    assert.deepEqual(record.warc, { file: 'x.warc.gz', offset: 400, length: 300 });
    assert.equal(pageRecordOfItem(item).warc, undefined, 'no location for an object not downloaded');
  });
});

describe("the dataset download follows the API's Link header", () => {
  it('takes the rel="next" path, and nothing when there is none', () => {
    const next = '/crawls/c/dataset?limit=10000&cursor=abc';
    assert.equal(nextLink(`<${next}>; rel="next"`), next);
    assert.equal(nextLink(`</x>; rel="prev", <${next}>; rel=next`), next);
    assert.equal(nextLink('</x>; rel="prev"'), undefined);
    assert.equal(nextLink(null), undefined);
  });
});
