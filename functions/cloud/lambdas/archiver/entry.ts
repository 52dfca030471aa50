/**
 * Lambda entry of the archiver: wires the AWS adapters once per container (cold start).
 */

import { createAwsClients } from '../../../adapters/aws/clients.ts';
import { readFunctionEnv } from '../../env.ts';
import { faultHookFromSpec } from '../../fault-hook.ts';
import { createAwsArchiverDeps } from '../aws-wiring.ts';
import { createArchiver } from './handler.ts';

export const handler = createArchiver(
  createAwsArchiverDeps(createAwsClients(process.env), readFunctionEnv(process.env, 'archiver'), {
    // Test seam, inert unless the variable is set (see functions/cloud/fault-hook.ts).
    fault: faultHookFromSpec(process.env.CRAWLSTACK_FAULT, process.env.CRAWLSTACK_FAULT_COUNTERS),
    log: (line) => console.error(`archiver: ${line}`),
  }),
);
