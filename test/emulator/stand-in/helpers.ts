/**
 * Shared setup for the stand-in tests: an endpoint per test file (the stand-in on a free port, or
 * the one `AWS_ENDPOINT_URL` names, e.g. real LocalStack) and names that do not collide between
 * parallel files or repeated runs against one LocalStack.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type AwsClients, createAwsClients } from '../../../functions/adapters/aws/clients.ts';
import { type Endpoint, startEndpoint } from '../../../localstack/endpoint.ts';

/** Read once at load: the local runtime itself sets AWS_ENDPOINT_URL while functions run. */
export const EXTERNAL_ENDPOINT = process.env.AWS_ENDPOINT_URL?.replace(/\/+$/, '') || undefined;

export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export interface TestEndpoint {
  url: string;
  /** The stand-in, when this file started one (metrics are only available then). */
  standIn?: Endpoint;
  clients: AwsClients;
  close(): Promise<void>;
}

/** Starts the stand-in on port 0, or wraps the external endpoint. */
export async function openTestEndpoint(): Promise<TestEndpoint> {
  const standIn = EXTERNAL_ENDPOINT === undefined ? await startEndpoint({ port: 0 }) : undefined;
  const url = standIn?.url ?? (EXTERNAL_ENDPOINT as string);
  const clients = createAwsClients({ AWS_ENDPOINT_URL: url, AWS_REGION: 'us-east-1' });
  return {
    url,
    ...(standIn === undefined ? {} : { standIn }),
    clients,
    async close() {
      clients.destroy();
      await standIn?.close();
    },
  };
}

let counter = 0;
const runId = `${process.pid.toString(36)}${randomBytes(2).toString('hex')}`;

/** A short name prefix unique to this process and call: `t<pid><rand><n>`. */
export function uniquePrefix(): string {
  counter += 1;
  return `t${runId}${counter}`;
}

/** Resolves after `ms`; only for making a handler take time, never for waiting on a result. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
