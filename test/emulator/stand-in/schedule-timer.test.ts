import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScheduledEvent } from 'aws-lambda';
import { LocalLambda } from '../../../localstack/local-lambda.ts';
import {
  parseRateExpression,
  ScheduleExpressionError,
  ScheduleTimer,
} from '../../../localstack/schedule-timer.ts';
import { eventually } from '../../fixtures/site-server.ts';
import { delay } from './helpers.ts';

describe('ScheduleTimer', () => {
  it('reads EventBridge rate expressions', () => {
    assert.equal(parseRateExpression('rate(1 minute)'), 60_000);
    assert.equal(parseRateExpression('rate(5 minutes)'), 300_000);
    assert.equal(parseRateExpression('rate(2 hours)'), 7_200_000);
    assert.equal(parseRateExpression('rate(1 day)'), 86_400_000);
    assert.throws(() => parseRateExpression('cron(0 * * * ? *)'), ScheduleExpressionError);
    assert.throws(
      () =>
        new ScheduleTimer({
          lambda: new LocalLambda({ name: 'x', handler: (() => 1) as never }),
          scheduleExpression: 'cron(0 12 * * ? *)',
        }),
      ScheduleExpressionError,
    );
  });

  it('fires scheduled events at the rate and lets runs overlap, each in its own container', async () => {
    const events: ScheduledEvent[] = [];
    let running = 0;
    let peak = 0;
    const lambda = new LocalLambda({
      name: 'scheduler',
      region: 'eu-west-1',
      handler: (async (event: ScheduledEvent) => {
        running += 1;
        peak = Math.max(peak, running);
        events.push(event);
        await delay(130);
        running -= 1;
      }) as never,
    });
    const timer = new ScheduleTimer({
      lambda,
      scheduleExpression: 'rate(1 minute)',
      rateMs: 50,
      ruleArn: 'arn:aws:events:eu-west-1:000000000000:rule/tick',
    }).start();
    try {
      await eventually(
        () => (events.length >= 3 && timer.stats().overlapped >= 2 ? true : undefined),
        5_000,
        'runs',
      );
    } finally {
      await timer.stop();
    }
    assert.equal(timer.rateMs, 50);
    // EventBridge invokes on every tick: a run of 130 ms at a 50 ms rate overlaps the next two.
    assert.ok(peak >= 2, `peak ${peak}`);
    assert.ok(lambda.stats().peakContainers >= 2, 'overlapping runs need containers of their own');
    assert.equal(running, 0, 'stop() waited for every run in progress');
    const stats = timer.stats();
    assert.equal(stats.fired, events.length);
    assert.equal(stats.failed, 0);
    const event = events[0];
    assert.ok(event);
    assert.equal(event['detail-type'], 'Scheduled Event');
    assert.equal(event.source, 'aws.events');
    assert.equal(event.region, 'eu-west-1');
    assert.deepEqual(event.resources, ['arn:aws:events:eu-west-1:000000000000:rule/tick']);
    assert.deepEqual(event.detail, {});
    assert.match(event.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const fired = stats.fired;
    await delay(120);
    assert.equal(timer.stats().fired, fired, 'no runs after stop');
  });

  it('sends a target constant input instead of the event, and counts failures', async () => {
    const inputs: unknown[] = [];
    const lambda = new LocalLambda({
      name: 'scheduler',
      handler: (async (event: unknown) => {
        inputs.push(event);
        throw new Error('nope');
      }) as never,
    });
    const timer = new ScheduleTimer({ lambda, rateMs: 20, input: { task: 'redistribute' } }).start();
    try {
      await eventually(() => (timer.stats().failed >= 2 ? true : undefined), 5_000, 'two failed runs');
    } finally {
      await timer.stop();
    }
    assert.deepEqual(inputs[0], { task: 'redistribute' });
    assert.equal(lambda.stats().errors, timer.stats().failed);
  });
});
