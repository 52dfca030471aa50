/**
 * Lambda entry of the archiver: wires the AWS adapters once per container (cold start).
 */

import { createAwsClients } from '../adapters/aws/clients.ts';
import { faultHookFromSpec } from '../cloud/fault-hook.ts';
import { readFunctionEnv } from '../env.ts';
import { createArchiver } from '../handlers/archiver.ts';
import { createAwsArchiverDeps } from '../wiring/aws-wiring.ts';

export const handler = createArchiver(
  createAwsArchiverDeps(createAwsClients(process.env), readFunctionEnv(process.env, 'archiver'), {
    // Test seam, inert unless the variable is set (see functions/cloud/fault-hook.ts).
    fault: faultHookFromSpec(process.env.CRAWLSTACK_FAULT),
    log: (line) => console.error(`archiver: ${line}`),
  }),
);
