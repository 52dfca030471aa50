import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ENV,
  FUNCTION_ENV,
  InvalidEnvError,
  MissingEnvError,
  readEnv,
  readFunctionEnv,
  readGroupLimit,
  readHostsPerInvocation,
  readRecrawlMinInterval,
  TUNING_ENV,
} from '../../functions/cloud/env.ts';
import { FRONTIER_GROUP_LIMIT } from '../../functions/cloud/lambda-settings.ts';

const full = {
  URL_TABLE: 'urls',
  CRAWL_TABLE: 'crawls',
  FRONTIER_QUEUE_URL: 'https://sqs.example/q.fifo',
  FRONTIER_DLQ_URL: 'https://sqs.example/dlq.fifo',
  PAGE_BUCKET: 'pages',
  CAPTURE_QUEUE_URL: 'https://sqs.example/captures',
  CAPTURE_DLQ_URL: 'https://sqs.example/captures-dlq',
  FRONTIER_MAX_RECEIVES: '10',
  RETENTION_DAYS: '90',
  PRIVATE_ADDRESSES: 'forbidden',
  RECRAWL_SCHEDULE_GROUP: 'recrawls',
  RECRAWL_SCHEDULE_ROLE_ARN: 'arn:aws:iam::123456789012:role/recrawls',
  RECRAWL_TARGET_ARN: 'arn:aws:lambda:us-east-1:123456789012:function:scheduler',
};

describe('functions/cloud/env.ts', () => {
  it('uses unique, upper-snake-case variable names', () => {
    const names = [...Object.values(ENV), ...Object.values(TUNING_ENV)];
    assert.equal(new Set(names).size, names.length);
    for (const name of names) assert.match(name, /^[A-Z][A-Z0-9_]*$/);
  });

  it('reads every variable into a typed object', () => {
    assert.deepEqual(readEnv(full), {
      urlTable: 'urls',
      crawlTable: 'crawls',
      frontierQueueUrl: 'https://sqs.example/q.fifo',
      frontierDlqUrl: 'https://sqs.example/dlq.fifo',
      pageBucket: 'pages',
      captureQueueUrl: 'https://sqs.example/captures',
      captureDlqUrl: 'https://sqs.example/captures-dlq',
      frontierMaxReceives: '10',
      retentionDays: '90',
      privateAddresses: 'forbidden',
      recrawlScheduleGroup: 'recrawls',
      recrawlScheduleRoleArn: 'arn:aws:iam::123456789012:role/recrawls',
      recrawlTargetArn: 'arn:aws:lambda:us-east-1:123456789012:function:scheduler',
    });
  });

  it('reads only what a function role needs', () => {
    const { FRONTIER_DLQ_URL: _, CAPTURE_DLQ_URL: ___, ...schedulerOnly } = full;
    assert.deepEqual(readFunctionEnv(schedulerOnly, 'scheduler'), {
      urlTable: 'urls',
      crawlTable: 'crawls',
      frontierQueueUrl: 'https://sqs.example/q.fifo',
      captureQueueUrl: 'https://sqs.example/captures',
      pageBucket: 'pages',
      retentionDays: '90',
      privateAddresses: 'forbidden',
    });
    assert.throws(() => readFunctionEnv(schedulerOnly, 'frontierWorker'), /FRONTIER_DLQ_URL/);
    assert.deepEqual(Object.keys(readFunctionEnv(full, 'api')).sort(), [...FUNCTION_ENV.api].sort());
  });

  it('names every missing or empty variable at once', () => {
    assert.throws(
      () => readEnv({ ...full, URL_TABLE: '', PAGE_BUCKET: undefined }),
      (e: unknown) => {
        assert.ok(e instanceof MissingEnvError);
        assert.equal(e.code, 'MISSING_ENV');
        assert.deepEqual(e.names, ['URL_TABLE', 'PAGE_BUCKET']);
        assert.match(e.message, /^missing environment variables URL_TABLE, PAGE_BUCKET /);
        return true;
      },
    );
  });

  it('reads the hosts per invocation, 20 when unset, and refuses what the runner cannot use', () => {
    assert.equal(readHostsPerInvocation({}), 20);
    assert.equal(readHostsPerInvocation({ WORKER_HOSTS_PER_INVOCATION: '' }), 20);
    assert.equal(readHostsPerInvocation({ WORKER_HOSTS_PER_INVOCATION: '40' }), 40);
    for (const bad of ['0', '501', '2.5', '-3', 'ten', ' 40']) {
      assert.throws(
        () => readHostsPerInvocation({ WORKER_HOSTS_PER_INVOCATION: bad }),
        (e: unknown) => {
          assert.ok(e instanceof InvalidEnvError, bad);
          assert.equal(e.code, 'INVALID_ENV');
          assert.equal(
            e.message,
            `environment variable WORKER_HOSTS_PER_INVOCATION=${JSON.stringify(bad)}: expected an integer from 1 to 500`,
          );
          return true;
        },
      );
    }
  });

  it('reads the worker group limit, FRONTIER_GROUP_LIMIT when unset (CDK sets none)', () => {
    assert.equal(readGroupLimit({}), FRONTIER_GROUP_LIMIT);
    assert.equal(readGroupLimit({ FRONTIER_GROUP_LIMIT: '1000' }), 1000);
    assert.throws(
      () => readGroupLimit({ FRONTIER_GROUP_LIMIT: '0' }),
      /FRONTIER_GROUP_LIMIT="0": expected an integer from 1 to 100000/,
    );
  });

  it("reads the recrawl schedules' minimum interval, 60 minutes when unset", () => {
    assert.equal(readRecrawlMinInterval({}), 60);
    assert.equal(readRecrawlMinInterval({ RECRAWL_MIN_INTERVAL_MINUTES: '1440' }), 1440);
    assert.throws(
      () => readRecrawlMinInterval({ RECRAWL_MIN_INTERVAL_MINUTES: '1h' }),
      /RECRAWL_MIN_INTERVAL_MINUTES="1h": expected an integer from 1 to 527040/,
    );
  });
});
