/**
 * Lambda entry of the HTTP API (function URL): wires the AWS adapters at cold start.
 */

import { createAwsApiDeps } from '../adapters/aws/aws-deps.ts';
import { createAwsClients } from '../adapters/aws/clients.ts';
import { readFunctionEnv } from '../env.ts';
import { createApiHandler } from '../handlers/api.ts';

export const handler = createApiHandler(
  createAwsApiDeps(createAwsClients(process.env), readFunctionEnv(process.env, 'api'), {
    log: (line) => console.error(`api: ${line}`),
  }),
);
