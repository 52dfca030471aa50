import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createAwsClients } from '../../../functions/adapters/aws/clients.ts';
import type { CfnTemplate } from '../../../localstack/cfn-template.ts';
import { startCloudLocal } from '../../../localstack/cloud-local.ts';
import { eventually } from '../../fixtures/site-server.ts';
import { EXTERNAL_ENDPOINT, FIXTURES, uniquePrefix } from './helpers.ts';

const TEMPLATE = join(FIXTURES, 'template.json');
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

describe('startCloudLocal', () => {
  it('runs a stack: function URL -> queue -> worker -> table, and the schedule', async () => {
    const logs: string[] = [];
    const reportDir = mkdtempSync(join(tmpdir(), 'crawlstack-iam-'));
    const iamReport = join(reportDir, 'iam.jsonl');
    const local = await startCloudLocal({
      iamReport,
      port: 0,
      prefix: uniquePrefix(),
      template: JSON.parse(readFileSync(TEMPLATE, 'utf8')) as CfnTemplate,
      assemblyDir: FIXTURES,
      scheduleRateMs: 150,
      eventSource: { waitTimeSeconds: 1 },
      env: { MAX_PAGES: '7' },
      log: (line) => logs.push(line),
    });
    const clients = createAwsClients({ AWS_ENDPOINT_URL: local.endpoint });
    try {
      assert.match(local.api, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(local.token, /^[0-9a-f]{64}$/);
      if (EXTERNAL_ENDPOINT === undefined) assert.match(local.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(logs.join('\n'), /TTL|Custom::S3AutoDeleteObjects/);

      const unauthorized = await fetch(`${local.api}/enqueue`, { method: 'POST', body: '{}' });
      assert.equal(unauthorized.status, 401);

      const headers = { authorization: `Bearer ${local.token}`, 'content-type': 'application/json' };
      const env = (await (await fetch(`${local.api}/env`, { headers })).json()) as Record<string, string>;
      assert.equal(env.maxPages, '7', 'options.env wins over the template');
      assert.equal(env.queueUrl, local.provisioned.resources.FrontierQueue0F1E2D3C?.url);

      for (const message of [
        { id: 'a', group: 'example.org' },
        { id: 'b', group: 'example.net', fail: 'once' },
        { id: 'c', group: 'example.org' },
        { id: 'poison', group: 'example.com', fail: 'always' },
      ]) {
        const response = await fetch(`${local.api}/enqueue`, {
          method: 'POST',
          headers,
          body: JSON.stringify(message),
        });
        assert.equal(response.status, 202);
        assert.deepEqual(await response.json(), { queued: message.id });
      }
      const table = local.provisioned.resources.UrlTable5E6F7A8B?.name;
      const item = (pk: string) => clients.doc.send(new GetCommand({ TableName: table, Key: { pk } }));
      for (const id of ['a', 'c']) {
        const stored = await eventually(async () => (await item(id)).Item, 20_000, `item ${id}`);
        assert.equal(stored.receives, 1);
      }
      // b comes back after the queue's visibility timeout (6 s: longer than the worker's 5 s timeout).
      const retried = await eventually(async () => (await item('b')).Item, 30_000, 'item b');
      assert.equal(retried.receives, 2, 'b failed once and came back');
      const viaApi = await fetch(`${local.api}/item?id=b`, { headers });
      assert.equal(((await viaApi.json()) as { pk: string }).pk, 'b');

      const dlqUrl = local.provisioned.resources.FrontierDlqA1B2C3D4?.url;
      const dead = await eventually(
        async () =>
          (
            await clients.sqs.send(
              new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }),
            )
          ).Messages?.[0]?.Body,
        40_000,
        'poison in the DLQ',
      );
      assert.equal(JSON.parse(dead).id, 'poison');

      const crawlTable = local.provisioned.resources.CrawlTable9C8D7E6F?.name;
      const runs = await eventually(
        async () => {
          const { Item } = await clients.doc.send(
            new GetCommand({ TableName: crawlTable, Key: { pk: 'scheduler', sk: 'runs' } }),
          );
          return Number(Item?.runs ?? 0) >= 2 ? Item : undefined;
        },
        10_000,
        'two scheduler runs',
      );
      assert.equal(runs.lastSource, 'aws.events');

      const metrics = local.metrics();
      assert.ok((metrics.functions.ApiFunction22222222?.invocations ?? 0) === 6);
      assert.ok((metrics.functions.WorkerFunction33333333?.invocations ?? 0) >= 3);
      assert.ok((metrics.functions.WorkerFunction33333333?.billedMs ?? 0) >= 3);
      assert.ok((metrics.eventSources.WorkerFunctionSqsEventSource55555555?.deleted ?? 0) >= 3);
      assert.ok((metrics.schedules.SchedulerRule88888888?.fired ?? 0) >= 2);
      // No more containers than the event source's MaximumConcurrency (2) or the reserved
      // concurrency (the scheduler's 1) allow at once.
      assert.ok((metrics.functions.WorkerFunction33333333?.peakContainers ?? 0) <= 2);
      assert.equal(metrics.functions.SchedulerFunction44444444?.peakContainers, 1);
      if (EXTERNAL_ENDPOINT === undefined) {
        assert.ok((metrics.endpoint?.requests.sqs.ReceiveMessage ?? 0) >= 1);
        assert.ok((metrics.endpoint?.dynamodb.writeRequestUnits ?? 0) >= 3);
        // Each function called with its own role (inline, AWS::IAM::Policy, customer and AWS
        // managed policies), the worker's event source too; the queue policy's TLS-only deny
        // did not apply (calls to AWS are TLS); nothing was denied.
        const iam = metrics.iam ?? {};
        assert.equal(iam.ApiFunction22222222?.['sqs:SendMessage']?.allowed, 4);
        assert.ok((iam.ApiFunction22222222?.['dynamodb:GetItem']?.allowed ?? 0) >= 1);
        assert.ok((iam.WorkerFunction33333333?.['sqs:ReceiveMessage']?.allowed ?? 0) >= 1);
        assert.ok((iam.WorkerFunction33333333?.['sqs:DeleteMessage']?.allowed ?? 0) >= 1);
        assert.ok((iam.WorkerFunction33333333?.['dynamodb:PutItem']?.allowed ?? 0) >= 3);
        assert.ok((iam.SchedulerFunction44444444?.['dynamodb:UpdateItem']?.allowed ?? 0) >= 2);
        const denied = Object.entries(iam).flatMap(([fn, actions]) =>
          Object.entries(actions)
            .filter(([, n]) => n.denied > 0)
            .map(([action]) => `${fn} ${action}`),
        );
        assert.deepEqual(denied, []);
      }
    } finally {
      clients.destroy();
      await local.stop();
    }
    assert.equal(process.env.QUEUE_URL, undefined, 'function environments stay in their containers');
    if (EXTERNAL_ENDPOINT === undefined) {
      const [line] = readFileSync(iamReport, 'utf8').trim().split('\n');
      const report = JSON.parse(line ?? '{}') as { iam: Record<string, Record<string, { allowed: number }>> };
      assert.equal(
        report.iam.ApiFunction22222222?.['sqs:SendMessage']?.allowed,
        4,
        'the IAM report written on stop',
      );
    }
    rmSync(reportDir, { recursive: true, force: true });
  });
});

/** `npm run cloud:local` with the fixture template and `args`, until stdout has `lastKey=`. */
async function runCli(args: string[], lastKey: string) {
  // Not the project's .tmp/cloud-local.json: that one is a developer's running cloud:local.
  const infoFile = join(mkdtempSync(join(tmpdir(), 'crawlstack-info-')), '.tmp', 'cloud-local.json');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--disable-warning=ExperimentalWarning',
      'localstack/cloud-local.ts',
      '--port',
      '0',
      '--prefix',
      uniquePrefix(),
      '--template',
      TEMPLATE,
      '--no-synth',
      '--info-file',
      infoFile,
      ...args,
    ],
    { cwd: PROJECT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async () => {
    child.kill('SIGTERM');
    const code = await exited;
    return { code, stderr };
  };
  try {
    const lines = await eventually(
      () => (new RegExp(`^${lastKey}=.*$`, 'm').test(stdout) ? stdout.trim().split('\n') : undefined),
      30_000,
      `the ${lastKey} line (stderr: ${stderr})`,
    );
    assert.ok(
      lines.every((l) => /^[a-zA-Z0-9._]+=/.test(l)),
      `stdout has only key=value lines: ${stdout}`,
    );
    const value = (key: string) => lines.find((l) => l.startsWith(`${key}=`))?.slice(key.length + 1);
    return { lines, value, stop, infoFile, pid: child.pid };
  } catch (error) {
    await stop();
    throw error;
  }
}

describe('startCloudLocal: queue and function settings', () => {
  it("refuses a queue whose visibility timeout is shorter than its function's timeout, as Lambda does", async () => {
    const start = (options: Parameters<typeof startCloudLocal>[0]) =>
      startCloudLocal({
        port: 0,
        prefix: uniquePrefix(),
        template: JSON.parse(readFileSync(TEMPLATE, 'utf8')) as CfnTemplate,
        assemblyDir: FIXTURES,
        prewarm: false,
        log: () => {},
        ...options,
      });
    // The worker's timeout is 5 s: a batch could outlive a 4 s visibility and go to two invocations.
    await assert.rejects(start({ queues: { FrontierQueue0F1E2D3C: { visibilityTimeoutSeconds: 4 } } }), {
      name: 'InvalidParameterValueException',
      message: /Queue visibility timeout: 4 seconds is less than Function timeout: 5 seconds/,
    });
    // Shorter for both, in the right order: accepted.
    const local = await start({
      queues: { FrontierQueue0F1E2D3C: { visibilityTimeoutSeconds: 4 } },
      functions: { WorkerFunction33333333: { timeoutSeconds: 3 } },
    });
    try {
      assert.equal(local.lambdas.WorkerFunction33333333?.timeoutMs, 3000);
    } finally {
      await local.stop();
    }
  });
});

describe('npm run cloud:local', () => {
  it('prints endpoint, api and token, serves, and stops cleanly on SIGTERM', async () => {
    const cli = await runCli([], 'token');
    try {
      assert.match(cli.value('endpoint') ?? '', /^http:\/\//);
      assert.match(cli.value('api') ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await fetch(`${cli.value('api')}/nowhere`, {
        headers: { authorization: `Bearer ${cli.value('token')}` },
      });
      assert.equal(response.status, 404);
      assert.deepEqual(await response.json(), { message: 'no route' });
      // The same for `crawlstack cloud`, which reads it when no API is given (owner-only: a secret).
      const info = JSON.parse(readFileSync(cli.infoFile, 'utf8')) as Record<string, unknown>;
      assert.deepEqual(info, {
        api: cli.value('api'),
        auth: 'bearer',
        token: cli.value('token'),
        region: process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1',
        endpoint: cli.value('endpoint'),
        pid: cli.pid,
      });
      assert.equal(statSync(cli.infoFile).mode & 0o777, 0o600);
    } finally {
      const { code, stderr } = await cli.stop();
      assert.equal(code, 0, stderr);
      assert.match(stderr, /SIGTERM, stopping/);
    }
    assert.equal(existsSync(cli.infoFile), false, 'removed when it stops');
  });

  it('checks SigV4 signatures instead of a token when given a key', async () => {
    const cli = await runCli(
      [
        '--access-key-id',
        'AKIAIOSFODNN7EXAMPLE',
        '--secret-access-key',
        'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      ],
      'access_key_id',
    );
    try {
      assert.equal(cli.value('auth'), 'sigv4');
      assert.equal(
        cli.value('region'),
        process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1',
      );
      assert.equal(cli.value('access_key_id'), 'AKIAIOSFODNN7EXAMPLE');
      assert.equal(cli.value('token'), undefined);
      const info = JSON.parse(readFileSync(cli.infoFile, 'utf8')) as Record<string, unknown>;
      assert.equal(info.auth, 'sigv4');
      assert.equal(info.token, undefined);
      const response = await fetch(`${cli.value('api')}/nowhere`, { headers: { authorization: 'Bearer x' } });
      assert.equal(response.status, 403);
    } finally {
      assert.equal((await cli.stop()).code, 0);
    }
  });
});
