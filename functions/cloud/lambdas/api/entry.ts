/**
 * Lambda entry of the HTTP API (function URL): wires the AWS adapters at cold start.
 */

import { createAwsClients } from '../../../adapters/aws/clients.ts';
import { createSchedulerClient } from '../../../adapters/aws/scheduler-recrawl-schedules.ts';
import { readFunctionEnv, readGroupLimit, readRecrawlMinInterval } from '../../env.ts';
import { emfLine } from '../../metrics.ts';
import { createAwsApiDeps } from '../aws-wiring.ts';
import { createApiHandler } from './handler.ts';

export const handler = createApiHandler(
  createAwsApiDeps(createAwsClients(process.env), readFunctionEnv(process.env, 'api'), {
    log: (line) => console.error(`api: ${line}`),
    groupLimit: readGroupLimit(process.env),
    scheduler: createSchedulerClient(process.env),
    recrawlMinIntervalMinutes: readRecrawlMinInterval(process.env),
    // One EMF line on stdout per 500: CloudWatch makes it a metric point the stack alarms on.
    metric: (name, value) => console.log(emfLine(name, value, Date.now(), { Function: 'Api' })),
  }),
);
