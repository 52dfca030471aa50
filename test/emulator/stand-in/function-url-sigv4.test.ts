import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { APIGatewayProxyEventV2WithIAMAuthorizer } from 'aws-lambda';
import type { CfnTemplate } from '../../../localstack/cfn-template.ts';
import { startCloudLocal } from '../../../localstack/cloud-local.ts';
import { FunctionUrlServer } from '../../../localstack/function-url-server.ts';
import { LocalLambda } from '../../../localstack/local-lambda.ts';
import { FIXTURES, uniquePrefix } from './helpers.ts';

// AWS's documentation example key pair.
const KEY = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const REGION = 'us-east-1';

interface SignOptions {
  key?: typeof KEY;
  signingDate?: Date;
  service?: string;
}

/** Signs a request with the AWS SDK's own SigV4 signer, as a client of a function URL does. */
async function signed(
  url: string,
  method: string,
  body: string | undefined,
  options: SignOptions = {},
): Promise<{ headers: Record<string, string>; body: string | undefined }> {
  const target = new URL(url);
  const signer = new SignatureV4({
    service: options.service ?? 'lambda',
    region: REGION,
    credentials: options.key ?? KEY,
    sha256: Sha256,
  });
  const request = await signer.sign(
    {
      method,
      protocol: target.protocol,
      hostname: target.hostname,
      port: Number(target.port),
      path: target.pathname,
      query: Object.fromEntries(target.searchParams),
      headers: { host: target.host, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body,
    },
    options.signingDate === undefined ? {} : { signingDate: options.signingDate },
  );
  const { host: _host, ...headers } = request.headers;
  return { headers, body };
}

async function send(
  url: string,
  method: string,
  request: { headers: Record<string, string>; body?: string | undefined },
) {
  const response = await fetch(url, { method, headers: request.headers, body: request.body ?? null });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('function URL with SigV4 (AuthType AWS_IAM)', () => {
  const servers: FunctionUrlServer[] = [];
  after(() => Promise.all(servers.map((s) => s.stop())));

  async function serve() {
    const events: APIGatewayProxyEventV2WithIAMAuthorizer[] = [];
    const lambda = new LocalLambda({
      name: 'api',
      region: REGION,
      handler: (async (event: APIGatewayProxyEventV2WithIAMAuthorizer) => {
        events.push(event);
        return { statusCode: 200, body: JSON.stringify({ path: event.rawPath, body: event.body ?? null }) };
      }) as never,
    });
    const server = new FunctionUrlServer({ lambda, sigv4: KEY });
    servers.push(server);
    return { url: await server.start(), lambda, events };
  }

  it('invokes the function for a request the SDK signed with the key', async () => {
    const { url, events } = await serve();
    const target = `${url}/crawls?limit=5&cursor=a%2Fb`;
    const body = JSON.stringify({ seeds: ['http://example.org/'] });
    const ok = await send(target, 'POST', await signed(target, 'POST', body));
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.deepEqual(ok.json, { path: '/crawls', body });
    assert.equal(events[0]?.requestContext.authorizer.iam.accessKey, KEY.accessKeyId);
    assert.equal(events[0]?.queryStringParameters?.cursor, 'a/b');
    const get = await send(`${url}/crawls/x`, 'GET', await signed(`${url}/crawls/x`, 'GET', undefined));
    assert.equal(get.status, 200);
  });

  it('refuses a tampered request, a wrong key, a missing signature and a bearer token with 403', async () => {
    const { url, lambda } = await serve();
    const target = `${url}/crawls`;
    const body = JSON.stringify({ seeds: ['http://example.org/'] });
    const mismatch = /^The request signature we calculated does not match the signature you provided/;

    const good = await signed(target, 'POST', body);
    const otherBody = await send(target, 'POST', {
      headers: good.headers,
      body: body.replace('example', 'attacker'),
    });
    assert.equal(otherBody.status, 403);
    assert.match(String(otherBody.json.Message), mismatch);
    const otherPath = await send(`${url}/crawls/other`, 'POST', good);
    assert.equal(otherPath.status, 403);
    assert.match(String(otherPath.json.Message), mismatch);

    const wrongSecret = await send(
      target,
      'POST',
      await signed(target, 'POST', body, { key: { ...KEY, secretAccessKey: 'not-the-secret' } }),
    );
    assert.equal(wrongSecret.status, 403);
    assert.match(String(wrongSecret.json.Message), mismatch);
    const wrongKey = await send(
      target,
      'POST',
      await signed(target, 'POST', body, { key: { ...KEY, accessKeyId: 'AKIAOTHERKEY0000000' } }),
    );
    assert.deepEqual(wrongKey, {
      status: 403,
      json: { Message: 'The security token included in the request is invalid.' },
    });
    const otherService = await send(
      target,
      'POST',
      await signed(target, 'POST', body, { service: 'execute-api' }),
    );
    assert.equal(otherService.status, 403);

    assert.deepEqual(await send(target, 'POST', { headers: {}, body }), {
      status: 403,
      json: { Message: 'Forbidden' },
    });
    const bearer = await send(target, 'POST', { headers: { authorization: 'Bearer anything' }, body });
    assert.deepEqual(bearer, { status: 403, json: { Message: 'Forbidden' } });
    assert.equal(lambda.stats().invocations, 0, 'the function never ran');
  });

  it('refuses a signature more than 5 minutes old or ahead', async () => {
    const { url, lambda } = await serve();
    const target = `${url}/crawls`;
    const at = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    assert.equal(
      (await send(target, 'GET', await signed(target, 'GET', undefined, { signingDate: at(-4) }))).status,
      200,
    );
    const old = await send(target, 'GET', await signed(target, 'GET', undefined, { signingDate: at(-6) }));
    assert.equal(old.status, 403);
    assert.match(
      String(old.json.Message),
      /^Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 5 min\.\)$/,
    );
    const ahead = await send(target, 'GET', await signed(target, 'GET', undefined, { signingDate: at(6) }));
    assert.equal(ahead.status, 403);
    assert.match(String(ahead.json.Message), /^Signature not yet current/);
    assert.equal(lambda.stats().invocations, 1);
  });

  it('is what startCloudLocal serves when given a key', async () => {
    const local = await startCloudLocal({
      port: 0,
      prefix: uniquePrefix(),
      template: JSON.parse(readFileSync(join(FIXTURES, 'template.json'), 'utf8')) as CfnTemplate,
      assemblyDir: FIXTURES,
      scheduleRateMs: 60_000,
      eventSource: { waitTimeSeconds: 1 },
      sigv4: KEY,
      log: () => {},
    });
    try {
      assert.equal(local.auth, 'sigv4');
      assert.equal(local.token, '');
      const target = `${local.api}/env`;
      const ok = await send(target, 'GET', await signed(target, 'GET', undefined));
      assert.equal(ok.status, 200, JSON.stringify(ok.json));
      assert.equal((await send(target, 'GET', { headers: {} })).status, 403);
    } finally {
      await local.stop();
    }
  });
});
