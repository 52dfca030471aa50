/**
 * Lambda entry of the scheduler: wires the AWS adapters at cold start. No AOPIC step is wired
 * yet (see `CreditRedistribution` in functions/cloud/complete-crawls.ts).
 */

import { createAwsSchedulerDeps } from '../adapters/aws/aws-deps.ts';
import { createAwsClients } from '../adapters/aws/clients.ts';
import { readFunctionEnv } from '../env.ts';
import { createScheduler } from '../handlers/scheduler.ts';

export const handler = createScheduler(
  createAwsSchedulerDeps(createAwsClients(process.env), readFunctionEnv(process.env, 'scheduler'), {
    log: (line) => console.error(`scheduler: ${line}`),
  }),
);
