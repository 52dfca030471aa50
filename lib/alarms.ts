import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC_NAMESPACE, METRICS } from '../functions/cloud/metrics.ts';

/** Properties of {@link Alarms}. */
export interface AlarmsProps {
  /** The frontier's dead-letter queue: any message in it is an alarm. */
  readonly dlq: sqs.IQueue;
  /** The capture queue's dead-letter queue: a page that could not be archived. */
  readonly captureDlq?: sqs.IQueue;
  /** Functions whose `Errors` alarm, keyed by the alarm's id prefix. */
  readonly functions: Readonly<Record<string, lambda.IFunction>>;
  /** The frontier worker, for the throttles alarm. */
  readonly worker: lambda.IFunction;
  /** Alarm on worker throttles (the account's concurrency ran out). */
  readonly throttleAlarm: boolean;
  /** Notified when an alarm fires and when it clears. @default - no action */
  readonly topic?: sns.ITopic;
  /** The frontier and capture queues: alarms on the age of their oldest message. */
  readonly frontier?: sqs.IQueue;
  readonly captures?: sqs.IQueue;
}

/**
 * A frontier message older than this means a crawl stopped making progress on some host (at 1
 * page per second, a host with 20,000 queued URLs takes about 6 hours; more is a stuck group).
 */
export const FRONTIER_AGE_ALARM_SECONDS = 6 * 3600;
/** The archiver gathers captures for a minute per batch: one older than this is not draining. */
export const CAPTURE_AGE_ALARM_SECONDS = 30 * 60;

/** CloudWatch alarms on the signs that a crawl is losing work. */
export class Alarms extends Construct {
  /** Every alarm, for dashboards and tests. */
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);

    // Any message in a DLQ is a URL the crawl did not finish (frontier) or a page not archived
    // (captures). IGNORE missing data: SQS stops publishing metrics for a queue idle for six
    // hours, and a DLQ that still holds messages must not drift back to OK because nobody
    // touched it.
    const dlqAlarm = (alarmId: string, queue: sqs.IQueue, description: string) =>
      this.#add(
        new cloudwatch.Alarm(this, alarmId, {
          alarmDescription: `crawlstack: ${description}`,
          metric: queue.metricApproximateNumberOfMessagesVisible({
            period: Duration.minutes(1),
            statistic: cloudwatch.Stats.MAXIMUM,
          }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.IGNORE,
        }),
        props.topic,
      );
    dlqAlarm('FrontierDlqMessagesAlarm', props.dlq, 'messages in the frontier dead-letter queue');
    if (props.captureDlq !== undefined) {
      dlqAlarm(
        'CaptureDlqMessagesAlarm',
        props.captureDlq,
        'captured pages in the capture dead-letter queue (not archived)',
      );
    }

    // Errors count invocations that threw or timed out. Batch item failures are not errors.
    for (const [name, fn] of Object.entries(props.functions)) {
      this.#add(
        new cloudwatch.Alarm(this, `${name}ErrorsAlarm`, {
          alarmDescription: `crawlstack: ${name} invocations failed`,
          metric: fn.metricErrors({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
        props.topic,
      );
    }

    // Hono answers an unexpected error with a normal 500, which Lambda's Errors metric never
    // counts: the API publishes its own count (functions/cloud/metrics.ts) and this alarm watches it.
    this.#add(
      new cloudwatch.Alarm(this, 'ApiInternalErrorsAlarm', {
        alarmDescription: 'crawlstack: the API answered 500 (an unexpected error)',
        metric: new cloudwatch.Metric({
          namespace: METRIC_NAMESPACE,
          metricName: METRICS.apiInternalErrors,
          dimensionsMap: { Function: 'Api' },
          period: Duration.minutes(5),
          statistic: cloudwatch.Stats.SUM,
        }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      props.topic,
    );

    // Work that waits too long: a stuck frontier group, an archiver that does not drain.
    const ageAlarm = (alarmId: string, queue: sqs.IQueue | undefined, seconds: number, what: string) => {
      if (queue === undefined) return;
      this.#add(
        new cloudwatch.Alarm(this, alarmId, {
          alarmDescription: `crawlstack: the oldest ${what} message is over ${seconds} s old`,
          metric: queue.metricApproximateAgeOfOldestMessage({
            period: Duration.minutes(5),
            statistic: cloudwatch.Stats.MAXIMUM,
          }),
          threshold: seconds,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
        props.topic,
      );
    };
    ageAlarm('FrontierAgeAlarm', props.frontier, FRONTIER_AGE_ALARM_SECONDS, 'frontier');
    ageAlarm('CaptureAgeAlarm', props.captures, CAPTURE_AGE_ALARM_SECONDS, 'capture');

    if (props.throttleAlarm) {
      // The event source's maxConcurrency keeps the worker under its own cap, so a throttle
      // means the account's (or region's) concurrency is exhausted by something else.
      this.#add(
        new cloudwatch.Alarm(this, 'FrontierWorkerThrottlesAlarm', {
          alarmDescription: 'crawlstack: FrontierWorker invocations throttled',
          metric: props.worker.metricThrottles({
            period: Duration.minutes(5),
            statistic: cloudwatch.Stats.SUM,
          }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
        props.topic,
      );
    }
  }

  #add(alarm: cloudwatch.Alarm, topic: sns.ITopic | undefined): void {
    if (topic) {
      const action = new actions.SnsAction(topic);
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    this.alarms.push(alarm);
  }
}
