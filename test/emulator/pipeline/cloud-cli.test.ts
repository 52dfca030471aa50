/**
 * `crawlstack cloud` end to end: the bundled CLI as a child process against the synthesized stack
 * on the stand-in. First with the local bearer token (start a crawl of a loopback site, watch it
 * to done, list, pages, download; then `rank` and `export` on the download), then against a stack
 * whose function URL checks SigV4 signatures with a known key (credentials from the environment)
 * and whose Api role lacks its S3 grants: each error a user can act on, with its exit code.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { CLOUD_LOCAL_FILE, writeCloudLocalInfo } from '../../../functions/cli/cloud/cloud-local-file.ts';
import type { LinkRecord, PageRecord } from '../../../functions/core/types.ts';
import { encodeTrace } from '../../../functions/core/url-seen/url-seen-trace.ts';
import { CrawlFolderReader } from '../../../functions/dashboard/crawl-folder-reader.ts';
import type { CfnTemplate } from '../../../localstack/cfn-template.ts';
import { FunctionUrlServer } from '../../../localstack/function-url-server.ts';
import { assertWarcMatchesPages, freePort, readJsonl, runCli, spawnCli, tempDir } from '../../e2e/helpers.ts';
import { eventually, type SiteServer } from '../../fixtures/site-server.ts';
import { EXTERNAL_ENDPOINT, type Pipeline, startFixtureSite, startPipeline } from './helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An environment with no AWS configuration at all: only what a test gives. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const home = tempDir('crawlstack-home-');
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    AWS_CONFIG_FILE: join(home, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
    // No probe of 169.254.169.254 for instance credentials.
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

/** Two hosts, six HTML pages, a redirect and a dead link. */
async function startSites(): Promise<{ seed: string; close(): Promise<void> }> {
  const origins: Record<string, string> = {};
  const resolve = (link: string) => {
    const m = /^@(\w+)(\/.*)$/.exec(link);
    return m === null ? link : `${origins[m[1]!]}${m[2]}`;
  };
  const a = await startFixtureSite(
    {
      host: '127.0.0.1',
      pages: {
        '/': ['/a1', '/a2', '/old', '/gone', '@B/'],
        '/a1': ['/', '/a2', '@B/b1'],
        '/a2': ['/a1', '/a3'],
        '/a3': ['/'],
      },
      extra: { '/old': { status: 301, headers: { location: '/a3' } } },
    },
    resolve,
  );
  const b = await startFixtureSite(
    { host: '127.0.0.2', pages: { '/': ['/b1', '@A/a1'], '/b1': ['/'] } },
    resolve,
  );
  origins.A = a.origin;
  origins.B = b.origin;
  const servers: SiteServer[] = [a, b];
  return {
    seed: `${a.origin}/`,
    close: async () => {
      for (const server of servers) await server.close();
    },
  };
}

describe('crawlstack cloud on the stand-in (bearer token)', () => {
  let p: Pipeline;
  let sites: Awaited<ReturnType<typeof startSites>>;
  /** A folder whose .tmp/cloud-local.json names the stack, as npm run cloud:local writes it. */
  let project: string;
  before(async () => {
    p = await startPipeline();
    sites = await startSites();
    project = tempDir('crawlstack-project-');
    writeCloudLocalInfo(join(project, CLOUD_LOCAL_FILE), {
      api: p.local.api,
      auth: 'bearer',
      token: p.local.token,
      region: p.local.region,
      endpoint: p.local.endpoint,
      pid: process.pid,
    });
  });
  after(async () => {
    await sites?.close();
    await p?.stop();
  });

  /** `crawlstack <args>` from the project folder: the API and token come from the file. */
  const cli = (args: string[], timeoutMs = 60_000) =>
    runCli(args, { cwd: project, env: cleanEnv(), timeoutMs });

  it('start, watch to done, list, status, pages, download; rank, export and the dashboard read the download', async () => {
    const started = await cli([
      'cloud',
      'start',
      sites.seed,
      '--allow-private',
      '--scope',
      'any',
      '--delay',
      '0',
      '--delay-factor',
      '0',
      '--no-soft404-probe',
      // The summary's counts below are the site's pages (no /sitemap.xml guess).
      '--no-sitemaps',
    ]);
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    assert.match(id, UUID, 'stdout is the id alone');
    assert.match(started.stderr, new RegExp(`crawlstack cloud watch ${id}`));

    const watched = await cli(['cloud', 'watch', id, '--interval', '0.5'], 240_000);
    assert.equal(watched.code, 0, watched.stderr);
    // The local crawl's summary: the same lines, the cloud's numbers.
    assert.match(
      watched.stdout,
      /^crawl done in \d+:\d\d\n {2}pages {8}8 fetched, 0 not fetched, 0 exact duplicates\n/,
    );
    assert.match(watched.stdout, /by status {4}200: 6, 301: 1, 404: 1/);
    assert.match(
      watched.stdout,
      new RegExp(`output {7}in the cloud: crawlstack cloud download ${id} --out DIR`),
    );
    assert.doesNotMatch(watched.stdout, /resources/, 'no CPU or memory of ours to show');

    // --api and --token name the API too, from any folder.
    const listed = await runCli(['cloud', 'list', '--api', p.local.api, '--token', p.local.token], {
      cwd: tempDir(),
      env: cleanEnv(),
    });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${id} {2}done {6}`, 'm'));
    // So do CRAWLSTACK_API and CRAWLSTACK_TOKEN.
    const status = await runCli(['cloud', 'status', id, '--json'], {
      cwd: tempDir(),
      env: cleanEnv({ CRAWLSTACK_API: p.local.api, CRAWLSTACK_TOKEN: p.local.token }),
    });
    assert.equal(status.code, 0, status.stderr);
    const view = JSON.parse(status.stdout) as { status: string; counters: { fetched: number } };
    assert.equal(view.status, 'done');
    assert.equal(view.counters.fetched, 8);

    const pages = await cli(['cloud', 'pages', id]);
    assert.equal(pages.code, 0, pages.stderr);
    const listedPages = pages.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; status: number | null });
    assert.equal(listedPages.length, 8, pages.stdout);

    const out = join(tempDir(), 'download');
    const downloaded = await cli(['cloud', 'download', id, '--out', out]);
    assert.equal(downloaded.code, 0, downloaded.stderr);
    assert.match(downloaded.stdout, /pages {8}8 in pages\.jsonl/);
    // The workers recorded the URL-seen trace (seenTrace, on by default): 8 bytes per look-up.
    assert.match(downloaded.stdout, /trace {8}url-seen\.trace/);
    const traceSize = statSync(join(out, 'url-seen.trace')).size;
    assert.ok(traceSize > 0 && traceSize % 8 === 0, `url-seen.trace of ${traceSize} bytes`);
    // The duplicate-URL rules, as a local crawl's rules.json (none learned on this small site).
    assert.match(downloaded.stdout, /rules {8}\d+ duplicate-URL rules in rules\.json/);
    assert.ok(Array.isArray(JSON.parse(readFileSync(join(out, 'rules.json'), 'utf8'))));
    const records = readJsonl<PageRecord>(join(out, 'pages.jsonl'));
    assert.deepEqual(records.map((r) => r.url).sort(), listedPages.map((r) => r.url).sort());
    const home = records.find((r) => r.url === sites.seed)!;
    assert.equal(home.finalUrl, sites.seed, 'the local record shape: finalUrl filled in');
    assert.equal(home.contentType?.startsWith('text/html'), true);
    assert.equal('fp' in home || 'messageId' in home, false, 'no cloud-only fields');
    assert.ok(typeof home.importance === 'number' && home.importance > 0);
    // The WARC files read cleanly and every page's location points at its response record.
    await assertWarcMatchesPages(out, records);
    const cdxj = readFileSync(join(out, 'warc', 'index.cdxj'), 'utf8')
      .trim()
      .split('\n');
    assert.equal(cdxj.length, records.filter((r) => r.warc !== undefined).length);
    // The local index's form: SURT key, 14-digit time, the record's own URL, type, status and digest.
    const line = /^\S+ (\d{14}) (\{.*\})$/.exec(cdxj[0]!);
    assert.ok(line, cdxj[0]);
    const entry = JSON.parse(line[2]!) as Record<string, string>;
    assert.match(entry.url ?? '', /^http:\/\/127\.0\.0\.[12]:\d+\//);
    assert.equal(entry.mime, 'text/html');
    assert.match(entry.digest ?? '', /^[A-Z2-7]{32}$/);
    assert.ok(existsSync(join(out, 'warc', entry.filename ?? '')), 'names a file of warc/');
    const links = readJsonl<LinkRecord>(join(out, 'links.jsonl'));
    assert.equal(links.length, 6, 'a links line per HTML page');
    const homeLinks = links.find((l) => l.from === sites.seed)!;
    assert.deepEqual(
      homeLinks.links.map((l) => new URL(l.url).pathname).sort(),
      ['/', '/a1', '/a2', '/gone', '/old'].sort(),
    );
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(summary.state, 'done');
    assert.equal(summary.pages, 8);
    assert.equal(summary.crawlId, id);

    // Resumable: a second run finds every object here and fetches none.
    const again = await cli(['cloud', 'download', id, '--out', out]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /warc: (\d+) objects \(0 fetched, 0 B; \1 already here\)/);
    assert.deepEqual(readJsonl<PageRecord>(join(out, 'pages.jsonl')), records, 'the same pages.jsonl');
    // A file cut short (an interrupted run) is fetched again; trace objects (trace/<crawl>/)
    // become url-seen.trace, in key order, for cache-study: two more are fetched and joined in.
    const warcFile = readdirSync(join(out, 'warc')).find((f) => f.endsWith('.warc.gz'))!;
    truncateSync(join(out, 'warc', warcFile), 100);
    const trace = [encodeTrace(['0123456789abcdef', 'fedcba9876543210']), encodeTrace(['0123456789abcdef'])];
    for (const [i, body] of trace.entries()) {
      await p.clients.s3.send(
        new PutObjectCommand({
          Bucket: p.bucket,
          Key: `trace/${id}/2026112600000000${i}-batch.trace`,
          Body: body,
        }),
      );
    }
    const resumed = await cli(['cloud', 'download', id, '--out', out]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /warc: (\d+) objects \(1 fetched, [\d.]+ KiB; \d+ already here\)/);
    assert.match(resumed.stderr, /trace: \d+ objects \(2 fetched/);
    await assertWarcMatchesPages(out, records);
    assert.deepEqual(readFileSync(join(out, 'url-seen.trace')), await traceObjects(p, id));
    const study = await runCli(['cache-study', '--out', out, '--sizes', '1-2'], { env: cleanEnv() });
    assert.equal(study.code, 0, study.stderr);
    // Another crawl's download is refused.
    writeFileSync(join(out, 'cloud', 'cloud.json'), JSON.stringify({ crawlId: 'another' }));
    const refused = await cli(['cloud', 'download', id, '--out', out]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /holds the download of crawl another/);

    const rank = await runCli(['rank', '--out', out, '--json'], { env: cleanEnv() });
    assert.equal(rank.code, 0, rank.stderr);
    const ranking = JSON.parse(rank.stdout) as {
      pages: { url: string; importance: number }[];
      edges: number;
    };
    assert.equal(ranking.pages.length, 6, 'the HTML pages fetched with a 2xx');
    assert.ok(ranking.edges >= 8, `edges between crawled pages: ${ranking.edges}`);
    assert.ok(
      ranking.pages.every((page) => page.importance > 0),
      'importance as recorded in the cloud',
    );
    const csv = await runCli(['export', '--out', out, '--format', 'csv', '--fields', 'url,status'], {
      env: cleanEnv(),
    });
    assert.equal(csv.code, 0, csv.stderr);
    assert.equal(csv.stdout.trimEnd().split('\r\n').length, 1 + 8);
    const dashboard = new CrawlFolderReader(out).read();
    assert.equal(dashboard.snapshot.pages, 8);
    assert.equal(dashboard.snapshot.state, 'done');

    const cancelled = await cli(['cloud', 'cancel', id]);
    assert.equal(cancelled.code, 0);
    assert.match(cancelled.stderr, /already ended \(done\): nothing to cancel/);
  });

  it('Ctrl-C stops watching (130) and the crawl keeps running; cancel stops it', async () => {
    // A gap of a minute between requests to a host: the crawl runs for longer than this test.
    const started = await cli([
      'cloud',
      'start',
      sites.seed,
      '--allow-private',
      '--delay',
      '60000',
      '--extract',
      'heading=h1',
    ]);
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    const watch = await spawnCli(['cloud', 'watch', id], project, cleanEnv());
    await eventually(() => (/watching crawl/.test(watch.stderr()) ? true : undefined), 30_000, 'watching');
    watch.child.kill('SIGINT');
    const { code } = await watch.exited;
    assert.equal(code, 130, watch.stderr());
    assert.match(watch.stderr(), new RegExp(`stopped watching; crawl ${id} keeps running in the cloud`));
    const running = await cli(['cloud', 'status', id, '--json']);
    assert.equal((JSON.parse(running.stdout) as { status: string }).status, 'running');
    // A running crawl downloads what is archived so far, with the dataset of its extract fields.
    const partialDir = join(tempDir(), 'partial');
    const partial = await cli(['cloud', 'download', id, '--out', partialDir]);
    assert.equal(partial.code, 0, partial.stderr);
    assert.match(partial.stderr, /note: the crawl is still running: this is what is archived so far/);
    assert.match(partial.stdout, /dataset {6}dataset\.jsonl/);
    assert.ok(existsSync(join(partialDir, 'dataset.jsonl')));

    // The dashboard for cloud crawls: a local page whose server calls the API with our auth.
    // (From the repository, where the test's bundle finds the page's files; --api and --token.)
    const ui = await spawnCli(
      ['cloud', 'ui', id, '--port', '0', '--api', p.local.api, '--token', p.local.token],
      undefined,
      cleanEnv(),
    );
    try {
      const url = await eventually(
        () => /(http:\/\/127\.0\.0\.1:\d+\/)\S*/.exec(ui.stdout())?.[1],
        30_000,
        'the dashboard URL',
      );
      const viewed = (await (await fetch(`${url}api/view?crawl=${id}`)).json()) as {
        source: string;
        crawlId: string;
        snapshot: { state: string };
      };
      assert.equal(viewed.source, 'cloud');
      assert.equal(viewed.crawlId, id);
      assert.equal(viewed.snapshot.state, 'running');
      assert.match(await (await fetch(url)).text(), /<html/i);
    } catch (error) {
      throw new Error(`cloud ui: ${ui.stdout()} ${ui.stderr()}`, { cause: error });
    } finally {
      ui.child.kill('SIGINT');
    }
    assert.equal((await ui.exited).code, 0, ui.stderr());
    const cancelled = await cli(['cloud', 'cancel', id]);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.match(cancelled.stdout, new RegExp(`crawl ${id} cancelled`));
    const now = await cli(['cloud', 'status', id, '--json']);
    assert.equal((JSON.parse(now.stdout) as { status: string }).status, 'cancelled');
  });

  it('errors a user can act on: unknown crawl, invalid config, wrong token, unreachable API, a stale cloud:local file', async () => {
    const unknown = await cli(['cloud', 'status', '00000000-0000-4000-8000-000000000000']);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /no crawl 00000000-0000-4000-8000-000000000000 at http:\/\/127\.0\.0\.1:\d+ \(crawlstack cloud list/,
    );

    // Checked here by the one schema, named with its flag: nothing is sent.
    const invalid = await cli(['cloud', 'start', 'ftp://example.org/', '--max-pages', '-3']);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /maxPages \(--max-pages\): /);
    assert.match(invalid.stderr, /seeds/);

    const token = await cli(['cloud', 'list', '--token', 'wrong']);
    assert.equal(token.code, 1);
    assert.match(token.stderr, /refused the bearer token \(401/);

    const port = await freePort('127.0.0.1');
    const down = await cli(['cloud', 'list', '--api', `http://127.0.0.1:${port}`, '--token', 't']);
    assert.equal(down.code, 2);
    assert.match(
      down.stderr,
      new RegExp(
        `cannot reach the API at http://127\\.0\\.0\\.1:${port} \\(from --api\\): connection refused`,
      ),
    );

    const stale = tempDir('crawlstack-project-');
    writeCloudLocalInfo(join(stale, CLOUD_LOCAL_FILE), {
      api: p.local.api,
      auth: 'bearer',
      token: p.local.token,
      region: 'us-east-1',
      endpoint: p.local.endpoint,
      pid: 2 ** 22 + 12345, // above Linux's pid_max: no such process
    });
    const gone = await runCli(['cloud', 'list'], { cwd: stale, env: cleanEnv() });
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /cloud-local\.json is from an npm run cloud:local that is no longer running/);
    const none = await runCli(['cloud', 'list'], { cwd: tempDir(), env: cleanEnv() });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no API given: pass --api URL/);
    const typo = await cli(['cloud', 'strat']);
    assert.equal(typo.code, 1);
    assert.match(
      typo.stderr,
      /no cloud command "strat" \(commands: start, status, watch, list, pages, recrawl, schedule, cancel, ui, download\)/,
    );
    const help = await cli(['help', 'cloud']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: crawlstack cloud <command>/);
  });
});

/** The template with the Api role's S3 statements taken away (as a stack whose grants lag its code). */
function withoutApiS3(template: CfnTemplate): CfnTemplate {
  const copy = structuredClone(template) as CfnTemplate & {
    Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  };
  let removed = 0;
  for (const resource of Object.values(copy.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const roles = JSON.stringify(resource.Properties?.Roles ?? []);
    if (!/"Ref":"[A-Za-z0-9]*ApiRole[A-Za-z0-9]*"/.test(roles)) continue;
    const document = resource.Properties?.PolicyDocument as { Statement: { Action: string | string[] }[] };
    const kept = document.Statement.filter((s) => ![s.Action].flat().some((a) => a.startsWith('s3:')));
    removed += document.Statement.length - kept.length;
    document.Statement = kept;
  }
  assert.ok(removed > 0, 'found the Api role S3 statements');
  return copy;
}

describe('crawlstack cloud with SigV4 (the stand-in checks signatures with a known key)', {
  skip: EXTERNAL_ENDPOINT && 'stand-in only (its function URL and IAM)',
}, () => {
  const KEY = {
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  };
  let p: Pipeline;
  let signed: FunctionUrlServer;
  before(async () => {
    // A deployment that forbids private addresses (the default), and whose Api role lost its S3 grants.
    p = await startPipeline({ env: { PRIVATE_ADDRESSES: 'forbidden' }, template: withoutApiS3 });
    signed = new FunctionUrlServer({ lambda: p.local.lambdas.Api!, sigv4: KEY });
    await signed.start();
  });
  after(async () => {
    await signed?.stop();
    await p?.stop();
  });

  const credentials = (extra: Record<string, string> = {}) =>
    cleanEnv({ AWS_ACCESS_KEY_ID: KEY.accessKeyId, AWS_SECRET_ACCESS_KEY: KEY.secretAccessKey, ...extra });
  const cli = (args: string[], env: NodeJS.ProcessEnv) =>
    runCli(['cloud', ...args, '--api', signed.url], { cwd: tempDir(), env });

  it("signs with the SDK's signer and the default chain's credentials: the stand-in verifies the signature", async () => {
    const started = await cli(
      ['start', 'https://example.org/', '--max-pages', '1'],
      credentials({ AWS_REGION: 'us-east-1' }),
    );
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    assert.match(id, UUID);
    // --region wins over the environment's region.
    const status = await cli(
      ['status', id, '--region', 'us-east-1'],
      credentials({ AWS_REGION: 'eu-west-1' }),
    );
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^crawl (running|done)/);
    // A session token travels as X-Amz-Security-Token and is signed too.
    const session = await cli(
      ['list'],
      credentials({ AWS_REGION: 'us-east-1', AWS_SESSION_TOKEN: 'session-token' }),
    );
    assert.equal(session.code, 0, session.stderr);
    assert.match(session.stdout, new RegExp(id));
  });

  it('a wrong secret is access denied, naming lambda:InvokeFunctionUrl', async () => {
    const denied = await cli(
      ['list'],
      credentials({ AWS_REGION: 'us-east-1', AWS_SECRET_ACCESS_KEY: 'not-the-secret' }),
    );
    assert.equal(denied.code, 1);
    assert.match(
      denied.stderr,
      /access denied by the API's function URL http:\/\/127\.0\.0\.1:\d+ \(403: The request signature we calculated does not match/,
    );
    assert.match(denied.stderr, /access key AKIAIOSFODNN7EXAMPLE\) needs lambda:InvokeFunctionUrl/);
  });

  it('a signature for another region says which region the API is in', async () => {
    const wrong = await cli(['list'], credentials({ AWS_REGION: 'eu-west-1' }));
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr,
      /signed for region eu-west-1 \(from your AWS configuration\), but the API at \S+ is in us-east-1: pass --region us-east-1/,
    );
  });

  it('no credentials anywhere: says how to configure them', async () => {
    const none = await cli(['list', '--region', 'us-east-1'], cleanEnv());
    assert.equal(none.code, 1);
    assert.match(
      none.stderr,
      /no AWS credentials found\. Configure them as for the AWS CLI: `aws configure`/,
    );
  });

  it("lists the API's 400 problems, and names the action its own role may not make", async () => {
    const env = credentials({ AWS_REGION: 'us-east-1' });
    const forbidden = await cli(['start', 'http://127.0.0.1:9/', '--allow-private'], env);
    assert.equal(forbidden.code, 1);
    assert.match(
      forbidden.stderr,
      /the API refused the request: invalid crawl configuration\n {2}allowPrivate: this deployment forbids/,
    );
    const id = (await cli(['start', 'https://example.org/', '--max-pages', '1'], env)).stdout.trim();
    const pages = await cli(['pages', id], env);
    assert.equal(pages.code, 2);
    assert.match(pages.stderr, /the API's own role may not call s3:ListBucket on "arn:aws:s3:::[^"]+"/);
    assert.match(pages.stderr, /deploy this version again \(npx cdk deploy\)/);
  });
});

/** The crawl's trace objects as stored, joined in key order (what url-seen.trace must hold). */
async function traceObjects(p: Pipeline, id: string): Promise<Buffer> {
  const listed = await p.clients.s3.send(
    new ListObjectsV2Command({ Bucket: p.bucket, Prefix: `trace/${id}/` }),
  );
  const keys = (listed.Contents ?? []).map((o) => o.Key!).sort();
  const bodies: Buffer[] = [];
  for (const key of keys) {
    const object = await p.clients.s3.send(new GetObjectCommand({ Bucket: p.bucket, Key: key }));
    bodies.push(Buffer.from(await object.Body!.transformToByteArray()));
  }
  return Buffer.concat(bodies);
}
