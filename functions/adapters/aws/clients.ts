/**
 * The one place AWS SDK clients are built. Every adapter, handler and tool asks this factory, so
 * the same code reaches real AWS, real LocalStack or the npm stand-in depending only on the
 * environment.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';

/** The clients a process needs, all pointed at the same endpoint. */
export interface AwsClients {
  sqs: SQSClient;
  dynamo: DynamoDBClient;
  /** Document client over `dynamo`: plain JS values in and out, `undefined` attributes dropped. */
  doc: DynamoDBDocumentClient;
  s3: S3Client;
  /** The emulator endpoint the clients use; absent for real AWS. */
  endpoint?: string;
  region: string;
  /** Closes the keep-alive sockets of every client (tools and tests; Lambdas never call it). */
  destroy(): void;
}

// Above SQS's 20 s long poll, so an idle wait for messages is never cut as a dead socket.
const SOCKET_IDLE_MS = 60_000;
const CONNECT_TIMEOUT_MS = 3_000;
// The SDK's own default is 50 per client; a Lambda container runs one invocation at a time, so
// this only matters for the local runtime and tools, where a few dozen parallel calls are normal.
const MAX_SOCKETS = 64;

function requestHandler(): NodeHttpHandler {
  return new NodeHttpHandler({
    connectionTimeout: CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_IDLE_MS,
    httpAgent: new HttpAgent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
    httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * Credentials for an emulator endpoint: the ones in `env` when it names any, otherwise the
 * `test`/`test` pair LocalStack and the stand-in accept. `undefined` means "let the SDK's default
 * chain find them" (a profile, a web identity token, a container role).
 */
function endpointCredentials(env: Record<string, string | undefined>) {
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  if (accessKeyId !== undefined && secretAccessKey !== undefined) {
    const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
    return sessionToken === undefined
      ? { accessKeyId, secretAccessKey }
      : { accessKeyId, secretAccessKey, sessionToken };
  }
  const otherSource =
    nonEmpty(env.AWS_PROFILE) ??
    nonEmpty(env.AWS_WEB_IDENTITY_TOKEN_FILE) ??
    nonEmpty(env.AWS_CONTAINER_CREDENTIALS_FULL_URI) ??
    nonEmpty(env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI);
  if (otherSource !== undefined) return undefined;
  return { accessKeyId: 'test', secretAccessKey: 'test' };
}

/**
 * What every client is built with: the region, and for an emulator endpoint (`AWS_ENDPOINT_URL`)
 * the endpoint and its credentials (see {@link createAwsClients}). Clients that only one function
 * needs (EventBridge Scheduler: the API) are built from it where they are used, so that the other
 * bundles do not carry their SDK.
 */
export function clientBase(env: Record<string, string | undefined>): {
  region: string;
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
} {
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? 'us-east-1';
  const endpoint = nonEmpty(env.AWS_ENDPOINT_URL);
  if (endpoint === undefined) return { region };
  const credentials = endpointCredentials(env);
  return credentials === undefined ? { region, endpoint } : { region, endpoint, credentials };
}

/** A request handler with the keep-alive and timeouts every client here uses. */
export function clientRequestHandler(): NodeHttpHandler {
  return requestHandler();
}

/**
 * Builds the SQS, DynamoDB (plain and document) and S3 clients from an environment map.
 *
 * - `AWS_ENDPOINT_URL` set: `endpoint` is passed to every client explicitly, because the SQS
 *   client otherwise sends each call to the host inside the QueueUrl (emulator queue URLs name
 *   hosts that do not resolve), and S3 gets `forcePathStyle` because `bucket.localhost` does not
 *   resolve either. Credentials fall back to `test`/`test` when the environment names none.
 * - Not set: nothing special, the SDK's defaults reach real AWS.
 *
 * Region: `AWS_REGION`, then `AWS_DEFAULT_REGION`, then `us-east-1`.
 */
export function createAwsClients(env: Record<string, string | undefined>): AwsClients {
  const base = clientBase(env);
  const { region, endpoint } = base;

  const sqs = new SQSClient({ ...base, requestHandler: requestHandler() });
  const dynamo = new DynamoDBClient({ ...base, requestHandler: requestHandler() });
  const s3 = new S3Client({
    ...base,
    requestHandler: requestHandler(),
    ...(endpoint === undefined ? {} : { forcePathStyle: true }),
  });
  const doc = DynamoDBDocumentClient.from(dynamo, {
    marshallOptions: { removeUndefinedValues: true },
  });

  const clients: AwsClients = {
    sqs,
    dynamo,
    doc,
    s3,
    region,
    destroy() {
      sqs.destroy();
      dynamo.destroy();
      s3.destroy();
    },
  };
  if (endpoint !== undefined) clients.endpoint = endpoint;
  return clients;
}
