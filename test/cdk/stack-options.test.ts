import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { App } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ContextValueError, readStackContext } from '../../lib/context.ts';
import { type CfnResource, type SynthResult, synthStack } from './synth.ts';

// Settings, not bundles: these stacks skip esbuild and the CloudFormation validation engine
// (crawlstack-stack.test.ts covers both).
const fast = { bundle: false, validate: false } as const;
const dev = synthStack({ dev: true }, fast);
const custom = synthStack(
  {
    maxReceiveCount: 25,
    workerMaxConcurrency: 50,
    workerHostsPerInvocation: 40,
    reserveWorkerConcurrency: true,
    retentionDays: 120,
    alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:crawl-alarms',
    throttleAlarm: false,
    tracing: true,
    logRetention: RetentionDays.ONE_WEEK,
  },
  fast,
);
const shortLived = synthStack({ retentionDays: 7 }, fast);
const forever = synthStack({ retentionDays: 0 }, fast);
const trusting = synthStack({ allowPrivateAddresses: true }, fast);
after(() => {
  for (const s of [dev, custom, shortLived, forever, trusting]) s.dispose();
});

const resourcesOf = (s: SynthResult) => s.template.toJSON().Resources as Record<string, CfnResource>;
const ofType = (s: SynthResult, type: string) => Object.values(resourcesOf(s)).filter((r) => r.Type === type);
/** A function's environment variables in a synthesized stack. */
const envOf = (s: SynthResult, id: string) => {
  const fn = resourcesOf(s)[id];
  assert.ok(fn, `function ${id}`);
  const environment = fn.Properties?.Environment as { Variables: Record<string, unknown> } | undefined;
  return environment?.Variables ?? {};
};
const lifecycle = (s: SynthResult) => {
  const config = resourcesOf(s).PageBucket?.Properties?.LifecycleConfiguration as {
    Rules: { Id: string; Transitions?: unknown }[];
  };
  assert.ok(config, 'PageBucket has a lifecycle configuration');
  return config.Rules;
};

describe('dev mode (crawlstack:dev=true)', () => {
  it('destroys tables, bucket and log groups with the stack and empties the bucket first', () => {
    const resources = resourcesOf(dev);
    for (const id of ['UrlTable', 'CrawlTable', 'PageBucket']) {
      assert.equal(resources[id]?.DeletionPolicy, 'Delete', id);
    }
    for (const group of ofType(dev, 'AWS::Logs::LogGroup')) assert.equal(group.DeletionPolicy, 'Delete');
    assert.equal(ofType(dev, 'Custom::S3AutoDeleteObjects').length, 1);
  });

  it('keeps point-in-time recovery on', () => {
    const table = resourcesOf(dev).UrlTable?.Properties;
    assert.deepEqual(table?.PointInTimeRecoverySpecification, { PointInTimeRecoveryEnabled: true });
  });
});

describe('stack props', () => {
  it('passes maxReceiveCount to the redrive policy', () => {
    const redrive = resourcesOf(custom).FrontierQueue?.Properties?.RedrivePolicy as {
      maxReceiveCount: number;
    };
    assert.equal(redrive.maxReceiveCount, 25);
  });

  it('passes workerMaxConcurrency to the event source', () => {
    custom.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ScalingConfig: { MaximumConcurrency: 50 },
    });
  });

  it('runs workerHostsPerInvocation hosts per invocation, with the memory they need, and reserves the pollers', () => {
    assert.equal(envOf(custom, 'FrontierWorker').WORKER_HOSTS_PER_INVOCATION, '40');
    const worker = resourcesOf(custom).FrontierWorker?.Properties;
    // 112 MiB runtime + 96 contexts + 24 working set + 40 hosts × 1.5 + one 50 MiB large body
    // = 342, rounded up to 64 MiB (lambda-settings.ts, workerMemoryMb).
    assert.equal(worker?.MemorySize, 384);
    assert.equal(worker?.ReservedConcurrentExecutions, 50);
    // The defaults: 20 hosts in 320 MB, nothing reserved (a new account may have nothing to reserve).
    const byDefault = resourcesOf(dev).FrontierWorker?.Properties;
    assert.equal(envOf(dev, 'FrontierWorker').WORKER_HOSTS_PER_INVOCATION, '20');
    assert.equal(byDefault?.MemorySize, 320);
    assert.equal(byDefault?.ReservedConcurrentExecutions, undefined);
    for (const s of [custom, dev]) {
      for (const id of ['Api', 'Scheduler', 'Archiver']) {
        assert.equal(resourcesOf(s)[id]?.Properties?.ReservedConcurrentExecutions, undefined, id);
      }
    }
  });

  it('expires pages and items after retentionDays and keeps the IA transition when it comes first', () => {
    const rules = lifecycle(custom);
    assert.deepEqual(
      rules.map((r) => r.Id),
      ['abort-incomplete-multipart', 'warc-to-infrequent-access', 'expire-pages'],
    );
    assert.deepEqual(rules[2], { Id: 'expire-pages', Status: 'Enabled', ExpirationInDays: 120 });
    // The same days reach every function that writes items, for their TTL.
    for (const id of ['FrontierWorker', 'Api', 'Scheduler']) {
      const env = envOf(custom, id);
      assert.equal(env.RETENTION_DAYS, '120', id);
    }
  });

  it('forbids allowPrivate unless the stack allows private addresses', () => {
    for (const id of ['FrontierWorker', 'Api']) {
      const vars = (s: SynthResult) => envOf(s, id);
      assert.equal(vars(custom).PRIVATE_ADDRESSES, 'forbidden', `${id}: forbidden by default`);
      assert.equal(vars(trusting).PRIVATE_ADDRESSES, 'allowed', id);
    }
  });

  it('keeps everything with retentionDays 0', () => {
    assert.ok(!lifecycle(forever).some((r) => r.Id === 'expire-pages'));
    const env = envOf(forever, 'FrontierWorker');
    assert.equal(env.RETENTION_DAYS, '0');
  });

  it('moves WARC objects to the archive class the deploy names, after its days', () => {
    const glacier = synthStack({ archiveStorageClass: 'GLACIER_IR', archiveTransitionDays: 0 }, fast);
    const rule = lifecycle(glacier).find((r) => r.Id === 'warc-to-glacier-ir');
    assert.deepEqual(rule, {
      Id: 'warc-to-glacier-ir',
      Prefix: 'warc/',
      Status: 'Enabled',
      Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 0 }],
    });
    const ia = lifecycle(synthStack({ archiveTransitionDays: 60 }, fast)).find(
      (r) => r.Id === 'warc-to-infrequent-access',
    );
    assert.deepEqual(ia?.Transitions, [{ StorageClass: 'STANDARD_IA', TransitionInDays: 60 }]);
    const standard = synthStack({ archiveStorageClass: 'STANDARD' }, fast);
    assert.ok(!lifecycle(standard).some((r) => String(r.Id).startsWith('warc-to-')), 'stays in Standard');
    // What S3 would refuse at deploy time is refused at synth, naming the setting.
    assert.throws(
      () => synthStack({ archiveStorageClass: 'STANDARD_IA', archiveTransitionDays: 10 }, fast),
      /archive transition days must be an integer from 30 to 3650 for STANDARD_IA, got 10/,
    );
    assert.throws(
      () => readStackContext(new App({ context: { 'crawlstack:archiveStorageClass': 'DEEP_ARCHIVE' } }).node),
      /crawlstack:archiveStorageClass="DEEP_ARCHIVE": expected STANDARD, STANDARD_IA or GLACIER_IR/,
    );
  });

  it('drops the IA transition when pages expire within 30 days', () => {
    const rules = lifecycle(shortLived);
    assert.deepEqual(
      rules.map((r) => r.Id),
      ['abort-incomplete-multipart', 'expire-pages'],
    );
  });

  it('sends every alarm and its recovery to the imported topic', () => {
    const alarms = ofType(custom, 'AWS::CloudWatch::Alarm');
    assert.equal(alarms.length, 9, 'no throttles alarm when throttleAlarm is false');
    for (const alarm of alarms) {
      assert.deepEqual(alarm.Properties?.AlarmActions, ['arn:aws:sns:eu-west-1:123456789012:crawl-alarms']);
      assert.deepEqual(alarm.Properties?.OKActions, ['arn:aws:sns:eu-west-1:123456789012:crawl-alarms']);
    }
    assert.equal(ofType(custom, 'AWS::SNS::Topic').length, 0, 'the topic is imported, not created');
  });

  it('turns on X-Ray and sets log retention', () => {
    for (const fn of ofType(custom, 'AWS::Lambda::Function')) {
      assert.deepEqual(fn.Properties?.TracingConfig, { Mode: 'Active' });
    }
    for (const group of ofType(custom, 'AWS::Logs::LogGroup')) {
      assert.equal(group.Properties?.RetentionInDays, 7);
    }
  });

  it('rejects values AWS would reject at deploy time', () => {
    const attempts: [string, Record<string, number>][] = [
      ['maxReceiveCount', { maxReceiveCount: 0 }],
      ['maxReceiveCount', { maxReceiveCount: 1001 }],
      ['retentionDays', { retentionDays: -1 }],
      ['maxReceiveCount', { maxReceiveCount: 2 }],
    ];
    for (const [name, props] of attempts) {
      assert.throws(() => synthStack(props, fast), new RegExp(`^Error: ${name} must be`), name);
    }
  });

  it("refuses a worker scale outside Lambda's bounds and the reservable concurrency, naming the context key", () => {
    const attempts: [string, Record<string, number>, RegExp][] = [
      ['workerMaxConcurrency', { workerMaxConcurrency: 1 }, /from 2 to 900\b/],
      ['workerMaxConcurrency', { workerMaxConcurrency: 2.5 }, /from 2 to 900\b/],
      // Above what the stack may reserve: AWS's 1,000 less the 100 Lambda keeps unreserved.
      ['workerMaxConcurrency', { workerMaxConcurrency: 901 }, /from 2 to 900 .*reservableConcurrency is 900/],
      ['workerMaxConcurrency', { workerMaxConcurrency: 100, reservableConcurrency: 50 }, /from 2 to 50\b/],
      // Lambda's own ceiling for an SQS event source, whatever the account allows.
      [
        'workerMaxConcurrency',
        { workerMaxConcurrency: 1001, reservableConcurrency: 5000 },
        /from 2 to 1000\b/,
      ],
      ['reservableConcurrency', { reservableConcurrency: 1 }, /from 2\b/],
      ['workerHostsPerInvocation', { workerHostsPerInvocation: 0 }, /from 1 to 500\b/],
      ['workerHostsPerInvocation', { workerHostsPerInvocation: 501 }, /from 1 to 500\b/],
      ['workerHostsPerInvocation', { workerHostsPerInvocation: 1.5 }, /from 1 to 500\b/],
    ];
    for (const [key, props, range] of attempts) {
      assert.throws(
        () => synthStack(props, fast),
        (e: unknown) => {
          assert.ok(e instanceof ContextValueError, `${key}: ${String(e)}`);
          assert.match(
            e.message,
            new RegExp(`^context crawlstack:${key}=${props[key]}: expected an integer`),
          );
          assert.match(e.message, range);
          return true;
        },
        key,
      );
    }
    // The top of each range synthesizes.
    const widest = synthStack({ workerMaxConcurrency: 900, workerHostsPerInvocation: 500 }, fast);
    try {
      assert.equal(resourcesOf(widest).FrontierWorker?.Properties?.MemorySize, 1088); // 112 + 96 + 24 + 500 × 1.5 + 50 = 1,032
    } finally {
      widest.dispose();
    }
  });
});

describe('readStackContext', () => {
  const read = (context: Record<string, unknown>) => readStackContext(new App({ context }).node);

  it('defaults to the CrawlstackStack name and no overrides', () => {
    assert.deepEqual(read({}), {
      stackName: 'CrawlstackStack',
      dev: undefined,
      maxReceiveCount: undefined,
      workerMaxConcurrency: undefined,
      workerHostsPerInvocation: undefined,
      reservableConcurrency: undefined,
      reserveWorkerConcurrency: undefined,
      retentionDays: undefined,
      archiveStorageClass: undefined,
      archiveTransitionDays: undefined,
      allowPrivateAddresses: undefined,
      recrawlMinIntervalMinutes: undefined,
      tracing: undefined,
      throttleAlarm: undefined,
      alarmTopicArn: undefined,
    });
  });

  it('parses the strings `-c key=value` gives as well as JSON values', () => {
    const fromCli = read({
      'crawlstack:stackName': 'CrawlstackDev',
      'crawlstack:dev': 'true',
      'crawlstack:maxReceiveCount': '12',
      'crawlstack:workerMaxConcurrency': '40',
      'crawlstack:workerHostsPerInvocation': '25',
      'crawlstack:reservableConcurrency': '2900',
      'crawlstack:reserveWorkerConcurrency': 'true',
      'crawlstack:retentionDays': '365',
      'crawlstack:archiveStorageClass': 'GLACIER_IR',
      'crawlstack:archiveTransitionDays': '0',
      'crawlstack:allowPrivateAddresses': 'true',
      'crawlstack:recrawlMinIntervalMinutes': '1440',
      'crawlstack:tracing': 'false',
      'crawlstack:throttleAlarm': 'false',
      'crawlstack:alarmTopicArn': 'arn:aws:sns:us-east-1:123456789012:t',
    });
    assert.deepEqual(fromCli, {
      stackName: 'CrawlstackDev',
      dev: true,
      maxReceiveCount: 12,
      workerMaxConcurrency: 40,
      workerHostsPerInvocation: 25,
      reservableConcurrency: 2900,
      reserveWorkerConcurrency: true,
      retentionDays: 365,
      archiveStorageClass: 'GLACIER_IR',
      archiveTransitionDays: 0,
      allowPrivateAddresses: true,
      recrawlMinIntervalMinutes: 1440,
      tracing: false,
      throttleAlarm: false,
      alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:t',
    });
    assert.equal(read({ 'crawlstack:dev': true, 'crawlstack:maxReceiveCount': 7 }).maxReceiveCount, 7);
  });

  it('names the key and value it cannot read', () => {
    assert.throws(
      () => read({ 'crawlstack:dev': 'yes' }),
      (e: unknown) => {
        assert.ok(e instanceof ContextValueError);
        assert.equal(e.code, 'BAD_CONTEXT_VALUE');
        assert.match(e.message, /crawlstack:dev="yes": expected true or false/);
        return true;
      },
    );
    assert.throws(() => read({ 'crawlstack:maxReceiveCount': '1e3' }), /crawlstack:maxReceiveCount/);
    assert.throws(() => read({ 'crawlstack:alarmTopicArn': '' }), /crawlstack:alarmTopicArn/);
    assert.throws(
      () => read({ 'crawlstack:workerHostsPerInvocation': '40 hosts' }),
      /crawlstack:workerHostsPerInvocation="40 hosts": expected an integer/,
    );
  });
});
