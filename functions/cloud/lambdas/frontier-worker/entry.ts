/**
 * Lambda entry of the frontier worker: wires the AWS adapters once per container (cold start).
 * The warm state (URL-seen caches, robots entries, fetchers) lives in what is built here.
 */

import { createAwsClients } from '../../../adapters/aws/clients.ts';
import { readFunctionEnv, readFunctionMemoryMb, readGroupLimit, readHostsPerInvocation } from '../../env.ts';
import { faultHookFromSpec } from '../../fault-hook.ts';
import { workerMemoryMb } from '../../lambda-settings.ts';
import { emfCounts } from '../../metrics.ts';
import { createAwsWorkerDeps, workerBodyBudget } from '../aws-wiring.ts';
import { createFrontierWorker } from './handler.ts';

const hosts = readHostsPerInvocation(process.env);
// The container's memory as deployed (the stack derives it from the hosts; an override counts).
const memoryMb = readFunctionMemoryMb(process.env) ?? workerMemoryMb(hosts);

export const handler = createFrontierWorker(
  createAwsWorkerDeps(createAwsClients(process.env), readFunctionEnv(process.env, 'frontierWorker'), {
    // Test seam, inert unless the variable is set (see functions/cloud/fault-hook.ts).
    fault: faultHookFromSpec(process.env.CRAWLSTACK_FAULT, process.env.CRAWLSTACK_FAULT_COUNTERS),
    log: (line) => console.error(`frontier-worker: ${line}`),
    groupLimit: readGroupLimit(process.env),
    bodyBudget: workerBodyBudget(memoryMb, hosts),
  }),
  // Hosts side by side per invocation: the stack's crawlstack:workerHostsPerInvocation.
  { hosts },
  (values) => console.log(emfCounts(values, Date.now(), { Function: 'FrontierWorker' })),
);
