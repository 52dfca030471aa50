/**
 * The strict stand-in against the real stack: the synthesized template's roles decide what each
 * function may do, so a missing grant fails here as it would on AWS.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CfnTemplate } from '../../../localstack/cfn-template.ts';
import { type CloudLocal, startCloudLocal, synthesizedTemplate } from '../../../localstack/cloud-local.ts';
import { eventually } from '../../fixtures/site-server.ts';
import { EXTERNAL_ENDPOINT, FIXTURES, uniquePrefix } from './helpers.ts';

const STAND_IN_ONLY =
  EXTERNAL_ENDPOINT !== undefined && 'stand-in only (LocalStack free does not enforce IAM)';

type Statement = { Action: string | string[]; Resource: unknown };

/** The statements of every policy attached to the role of `functionId`. */
function roleStatements(template: CfnTemplate, functionId: string): Statement[] {
  const props = (id: string) => template.Resources[id]?.Properties ?? {};
  const role = (props(functionId).Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
  return Object.entries(template.Resources)
    .filter(
      ([id, r]) =>
        r.Type === 'AWS::IAM::Policy' &&
        (props(id).Roles as { Ref: string }[]).some((ref) => ref.Ref === role),
    )
    .flatMap(([id]) => (props(id).PolicyDocument as { Statement: Statement[] }).Statement);
}

/**
 * A copy of `template` where `functionId`'s role has none of `actions` on `resourceId` (the
 * statements naming it keep their other actions).
 */
function withoutGrant(
  template: CfnTemplate,
  functionId: string,
  resourceId: string,
  actions: string[],
): CfnTemplate {
  const copy = structuredClone(template);
  for (const statement of roleStatements(copy, functionId)) {
    if (!JSON.stringify(statement.Resource).includes(`"${resourceId}"`)) continue;
    statement.Action = [statement.Action].flat().filter((a) => !actions.includes(a));
  }
  return copy;
}

async function startStack(template: CfnTemplate, assemblyDir: string, logs: string[]): Promise<CloudLocal> {
  return startCloudLocal({
    port: 0,
    prefix: uniquePrefix(),
    template,
    assemblyDir,
    scheduleRateMs: 60_000,
    eventSource: { waitTimeSeconds: 1 },
    log: (line) => logs.push(line),
  });
}

async function postCrawl(local: CloudLocal): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${local.api}/crawls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${local.token}`, 'content-type': 'application/json' },
    // Nothing listens there: the crawl's fate does not matter, only starting it.
    body: JSON.stringify({ seeds: ['http://127.0.0.1:9/'], allowPrivate: true }),
  });
  return { status: response.status, body: await response.json() };
}

describe('the synthesized stack on the strict stand-in', { skip: STAND_IN_ONLY }, () => {
  it("refuses POST /crawls when the Api's role may not put items in the crawl table (the crawl, the seeds' URL-seen chunks)", async () => {
    const { template, assemblyDir } = await synthesizedTemplate();
    const logs: string[] = [];
    const without = withoutGrant(template, 'Api', 'CrawlTable', ['dynamodb:PutItem']);
    const local = await startStack(without, assemblyDir, logs);
    try {
      const { status } = await postCrawl(local);
      assert.equal(status, 500);
      const crawlTable = local.provisioned.resources.CrawlTable?.arn;
      // The cause is not hidden behind the 500: the API logs AWS's refusal.
      const line = await eventually(
        () => logs.find((l) => l.includes('AccessDeniedException')),
        10_000,
        `the AccessDenied in the logs: ${logs.join('\n')}`,
      );
      assert.match(line, /is not authorized to perform: dynamodb:PutItem on resource: /);
      assert.ok(
        line.includes(`${crawlTable} because no identity-based policy allows the dynamodb:PutItem action`),
      );
      assert.ok((local.metrics().iam?.Api?.['dynamodb:PutItem']?.denied ?? 0) >= 1);
    } finally {
      await local.stop();
    }
  });

  it('starts a crawl with the current grants', async () => {
    const { template, assemblyDir } = await synthesizedTemplate();
    const logs: string[] = [];
    const local = await startStack(template, assemblyDir, logs);
    try {
      const { status, body } = await postCrawl(local);
      assert.equal(status, 201, `${JSON.stringify(body)}\n${logs.join('\n')}`);
      const api = local.metrics().iam?.Api ?? {};
      assert.ok((api['dynamodb:PutItem']?.allowed ?? 0) >= 1);
      const denied = Object.entries(api).filter(([, n]) => n.denied > 0);
      assert.deepEqual(denied, []);
    } finally {
      await local.stop();
    }
  });
});

describe('the event source mapping polls with the function role', { skip: STAND_IN_ONLY }, () => {
  it("fails to receive when the role lacks sqs:ReceiveMessage, as Lambda's poller would", async () => {
    const template = JSON.parse(readFileSync(join(FIXTURES, 'template.json'), 'utf8')) as CfnTemplate;
    // The worker's queue permissions come from the AWS managed SQS execution role: drop it.
    const role = template.Resources.WorkerFunctionServiceRoleBBBBBBBB?.Properties as {
      ManagedPolicyArns: unknown[];
    };
    role.ManagedPolicyArns = role.ManagedPolicyArns.slice(0, 1);
    const logs: string[] = [];
    const local = await startCloudLocal({
      port: 0,
      prefix: uniquePrefix(),
      template,
      assemblyDir: FIXTURES,
      scheduleRateMs: 60_000,
      eventSource: { waitTimeSeconds: 1 },
      log: (line) => logs.push(line),
    });
    try {
      const line = await eventually(
        () => logs.find((l) => l.startsWith('receive from') && l.includes('AccessDenied')),
        10_000,
        'a refused receive',
      );
      assert.match(line, /is not authorized to perform: sqs:receivemessage on resource: arn:aws:sqs:/);
      assert.ok((local.metrics().eventSources.WorkerFunctionSqsEventSource55555555?.receiveErrors ?? 0) >= 1);
      assert.ok((local.metrics().iam?.WorkerFunction33333333?.['sqs:ReceiveMessage']?.denied ?? 0) >= 1);
    } finally {
      await local.stop();
    }
  });
});
