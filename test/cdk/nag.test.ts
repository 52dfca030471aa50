/**
 * cdk-nag's AWS Solutions rule pack over the stack, in its default settings and with every
 * optional part on. Every finding is either fixed in lib/ or acknowledged next to its construct
 * with a written reason (`Validations.of(construct).acknowledge({ id, reason })`, cdk-nag 3's
 * suppression); the test fails on any finding left, error or warning, and on an acknowledgment
 * that no finding needs (a stale one would hide the next real finding of that rule there).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { App, type PolicyValidationPluginReport, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { CrawlstackStack, type CrawlstackStackProps } from '../../lib/crawlstack-stack.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};

/** The stack as `cdk synth` builds it (cdk.json's context), without bundling: nag reads the tree. */
function buildApp(props: CrawlstackStackProps): App {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  new CrawlstackStack(app, 'CrawlstackStack', props);
  return app;
}

/** Every settings combination whose resources differ: defaults, and every optional part on. */
const SETTINGS: Record<string, CrawlstackStackProps> = {
  defaults: {},
  'dev, tracing, alarm topic, keep forever, private addresses': {
    dev: true,
    tracing: true,
    alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:crawlstack-alarms',
    retentionDays: 0,
    allowPrivateAddresses: true,
    throttleAlarm: false,
  },
};

const FUNCTIONS = ['FrontierWorker', 'Api', 'Scheduler', 'Archiver'];
const BUCKET_ROLES = ['FrontierWorker', 'Api', 'Archiver'];

/**
 * What the pack finds with no acknowledgment at all, per rule: the construct paths (under the
 * stack) it flags. Each one is acknowledged in lib/ with its reason (docs/cloud-infrastructure.md
 * lists them). Everything else the pack checks passes as built.
 */
function expectedFindings(props: CrawlstackStackProps): Record<string, string[]> {
  const findings: Record<string, string[]> = {
    // lib/storage.ts: server access logs on the page bucket.
    'AwsSolutions-S1': ['Storage/PageBucket/Resource'],
    // lib/node-function.ts: nodejs22.x, not the newest runtime.
    'AwsSolutions-L1': FUNCTIONS.map((fn) => `Functions/${fn}/Resource`),
    // lib/grants.ts: object actions on the bucket's objects (`arn/*`).
    'AwsSolutions-IAM5[Resource::<PageBucket.Arn>/*]': BUCKET_ROLES.map(
      (fn) => `Functions/${fn}Role/DefaultPolicy/Resource`,
    ),
  };
  // lib/recrawl-schedules.ts: the schedules of the stack's group are named after archives (`group/*`).
  findings[
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/<RecrawlScheduleGroup>/*]'
  ] = ['Functions/ApiRole/DefaultPolicy/Resource'];
  // lib/node-function.ts: X-Ray exists only on Resource *.
  if (props.tracing === true) {
    findings['AwsSolutions-IAM5[Resource::*]'] = FUNCTIONS.map(
      (fn) => `Functions/${fn}Role/DefaultPolicy/Resource`,
    );
  }
  return findings;
}

function findingsOf(report: PolicyValidationPluginReport): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const violation of report.violations) {
    out[violation.ruleName] = violation.violatingResources
      .map((r) => (r.constructPath ?? r.resourceLogicalId ?? '?').replace(/^CrawlstackStack\//, ''))
      .sort();
  }
  return out;
}

function describeReport(report: PolicyValidationPluginReport): string {
  return report.violations
    .map(
      (v) =>
        `${v.ruleName} (${v.severity}): ${v.description}\n` +
        v.violatingResources.map((r) => `  at ${r.constructPath ?? r.resourceLogicalId}`).join('\n'),
    )
    .join('\n');
}

/** Every acknowledgment recorded in the tree: where, which rule, and why. */
function acknowledgments(root: IConstruct): { path: string; id: string; reason: string }[] {
  const out: { path: string; id: string; reason: string }[] = [];
  for (const node of root.node.findAll()) {
    for (const entry of node.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        out.push({ path: node.node.path, id, reason });
      }
    }
  }
  return out;
}

/** The pack as it would report with every acknowledgment ignored (what lib/ has to answer for). */
function unacknowledgedPack(app: App): AwsSolutionsChecks {
  const pack = new AwsSolutionsChecks(app);
  Object.defineProperty(pack, 'isAcknowledged', { value: () => false });
  return pack;
}

for (const [name, props] of Object.entries(SETTINGS)) {
  describe(`cdk-nag AwsSolutions: ${name}`, () => {
    const app = buildApp(props);

    it('leaves no error and no warning', () => {
      const report = new AwsSolutionsChecks(app, { verbose: true }).validateScope(app);
      assert.equal(report.violations.length, 0, describeReport(report));
      assert.equal(report.success, true);
    });

    it('finds exactly the documented findings when acknowledgments are ignored', () => {
      const raw = findingsOf(unacknowledgedPack(app).validateScope(app));
      const expected = Object.fromEntries(
        Object.entries(expectedFindings(props)).map(([rule, paths]) => [rule, [...paths].sort()]),
      );
      assert.deepEqual(raw, expected);
    });

    it('acknowledges each finding next to its construct, with a reason, never stack-wide', () => {
      const acks = acknowledgments(app);
      const expected = expectedFindings(props);
      for (const rule of Object.keys(expected)) {
        assert.ok(
          acks.some((a) => a.id.endsWith(rule)),
          `${rule} acknowledged: ${JSON.stringify(acks.map((a) => a.id))}`,
        );
      }
      for (const ack of acks) {
        assert.ok(ack.reason.length >= 60, `${ack.path} ${ack.id}: a reason, not a label: "${ack.reason}"`);
        const node = app.node.findAll().find((c) => c.node.path === ack.path)!;
        assert.ok(!Stack.isStack(node) && node !== app, `${ack.id} acknowledged on ${ack.path}: stack-wide`);
        const rule = Object.keys(expected).find((r) => ack.id.endsWith(r));
        assert.ok(rule !== undefined, `${ack.path}: ${ack.id} acknowledges no finding (stale)`);
        assert.ok(
          expected[rule]!.some((p) => `CrawlstackStack/${p}`.startsWith(`${ack.path}/`)),
          `${ack.path}: ${ack.id} is not above a construct the rule flags`,
        );
      }
    });
  });
}

describe('cdk-nag as a synthesis plugin', () => {
  it('lets `cdk synth` of the default stack through with the pack registered', () => {
    const app = buildApp({});
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    // Throws (and prints the report) on any violation.
    const assembly = app.synth({ force: true });
    assert.ok(assembly.getStackByName('CrawlstackStack'));
  });
});
