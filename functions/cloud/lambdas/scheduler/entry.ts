/**
 * Lambda entry of the scheduler: wires the AWS adapters at cold start (crawl completion and the
 * AOPIC step, see functions/cloud/use-cases/redistribute-credit.ts).
 */

import { createAwsClients } from '../../../adapters/aws/clients.ts';
import { readFunctionEnv, readGroupLimit } from '../../env.ts';
import { createAwsSchedulerDeps } from '../aws-wiring.ts';
import { createScheduler } from './handler.ts';

export const handler = createScheduler(
  createAwsSchedulerDeps(createAwsClients(process.env), readFunctionEnv(process.env, 'scheduler'), {
    log: (line) => console.error(`scheduler: ${line}`),
    groupLimit: readGroupLimit(process.env),
  }),
);
