import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, it } from 'node:test';
import type { APIGatewayProxyEventV2WithIAMAuthorizer } from 'aws-lambda';
import { FunctionUrlServer, isTextContentType } from '../../../localstack/function-url-server.ts';
import { type LambdaHandler, LocalLambda } from '../../../localstack/local-lambda.ts';
import { delay } from './helpers.ts';

const servers: FunctionUrlServer[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

async function serve(
  handler: (event: APIGatewayProxyEventV2WithIAMAuthorizer) => unknown,
  options: {
    authType?: 'AWS_IAM' | 'NONE';
    timeoutSeconds?: number;
    reservedConcurrency?: number;
    maxBodyBytes?: number;
  } = {},
) {
  const lambda = new LocalLambda({
    name: 'api',
    handler: handler as unknown as LambdaHandler,
    timeoutSeconds: options.timeoutSeconds ?? 3,
    ...(options.reservedConcurrency === undefined
      ? {}
      : { reservedConcurrency: options.reservedConcurrency }),
  });
  const server = new FunctionUrlServer({
    lambda,
    token: 'local-secret',
    ...(options.authType === undefined ? {} : { authType: options.authType }),
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
  });
  servers.push(server);
  await server.start();
  return { lambda, server, url: server.url };
}

const auth = { authorization: 'Bearer local-secret' };

/** A raw request, for repeated headers that fetch would merge. */
function rawRequest(url: string, rawHeaders: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: rawHeaders }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('FunctionUrlServer', () => {
  it('answers 401 without the bearer token or with a wrong one, and never runs the function', async () => {
    const { lambda, url } = await serve(() => 'ran');
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: 'local-secret' },
    ];
    for (const headers of attempts) {
      const response = await fetch(`${url}/crawls`, { headers });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('content-type'), 'application/json');
      const body = (await response.json()) as { message: string };
      assert.match(body.message, /bearer token/);
    }
    assert.equal(lambda.stats().invocations, 0);
    const allowed = await fetch(`${url}/crawls`, { headers: auth });
    assert.equal(allowed.status, 200);
  });

  it('builds a payload format 2.0 event', async () => {
    let seen: APIGatewayProxyEventV2WithIAMAuthorizer | undefined;
    const { url } = await serve((event) => {
      seen = event;
      return { statusCode: 204 };
    });
    const response = await rawRequest(`${url}/crawls/c1/pages?x=1&x=2&q=a%20b&empty=`, [
      'Host',
      new URL(url).host,
      'Authorization',
      'Bearer local-secret',
      'X-Multi',
      'one',
      'X-Multi',
      'two',
      'Cookie',
      'a=1; b=2',
      'User-Agent',
      'stand-in-test',
    ]);
    assert.equal(response.status, 204);
    assert.ok(seen);
    assert.equal(seen.version, '2.0');
    assert.equal(seen.routeKey, '$default');
    assert.equal(seen.rawPath, '/crawls/c1/pages');
    assert.equal(seen.rawQueryString, 'x=1&x=2&q=a%20b&empty=');
    assert.deepEqual(seen.queryStringParameters, { x: '1,2', q: 'a b', empty: '' });
    assert.equal(seen.headers['x-multi'], 'one,two');
    assert.equal(seen.headers['user-agent'], 'stand-in-test');
    assert.equal(seen.headers.authorization, undefined);
    assert.equal(seen.headers.cookie, undefined);
    assert.deepEqual(seen.cookies, ['a=1', 'b=2']);
    assert.equal(seen.requestContext.http.method, 'GET');
    assert.equal(seen.requestContext.http.path, '/crawls/c1/pages');
    assert.equal(seen.requestContext.http.userAgent, 'stand-in-test');
    assert.equal(seen.requestContext.stage, '$default');
    assert.equal(seen.requestContext.domainName, new URL(url).host);
    assert.ok(seen.requestContext.requestId);
    assert.match(seen.requestContext.time, /^\d\d\/[A-Z][a-z]{2}\/\d{4}:\d\d:\d\d:\d\d \+0000$/);
    assert.ok(seen.requestContext.authorizer.iam.userArn.startsWith('arn:aws:iam::'));
    assert.equal(seen.body, undefined);
    assert.equal(seen.isBase64Encoded, false);
  });

  it('passes text bodies as text and other bodies as base64', async () => {
    const bodies: { body: string | undefined; isBase64Encoded: boolean }[] = [];
    const { url } = await serve((event) => {
      bodies.push({ body: event.body, isBase64Encoded: event.isBase64Encoded });
      return { statusCode: 200, body: 'ok' };
    });
    await fetch(`${url}/a`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
      body: '{"seeds":["https://example.org/"]}',
    });
    await fetch(`${url}/b`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0, 1, 2, 255]),
    });
    assert.deepEqual(bodies, [
      { body: '{"seeds":["https://example.org/"]}', isBase64Encoded: false },
      { body: Buffer.from([0, 1, 2, 255]).toString('base64'), isBase64Encoded: true },
    ]);
    assert.ok(isTextContentType('text/html'));
    assert.ok(isTextContentType('application/problem+json'));
    assert.ok(!isTextContentType('image/png'));
    assert.ok(!isTextContentType(undefined));
  });

  it('maps status, headers, cookies and body of the result', async () => {
    const results: unknown[] = [
      {
        statusCode: 201,
        headers: { 'X-Crawl': 'c1', 'Content-Type': 'text/plain' },
        cookies: ['s=1', 't=2'],
        body: 'made',
      },
      { statusCode: 200, isBase64Encoded: true, body: Buffer.from([9, 8, 7]).toString('base64') },
      'plain string',
      { crawls: [] },
    ];
    let call = 0;
    const { url } = await serve(() => results[call++]);

    const created = await fetch(`${url}/`, { headers: auth });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('x-crawl'), 'c1');
    assert.equal(created.headers.get('content-type'), 'text/plain');
    assert.deepEqual(created.headers.getSetCookie(), ['s=1', 't=2']);
    assert.equal(await created.text(), 'made');

    const binary = await fetch(`${url}/`, { headers: auth });
    assert.deepEqual(new Uint8Array(await binary.arrayBuffer()), new Uint8Array([9, 8, 7]));

    const text = await fetch(`${url}/`, { headers: auth });
    assert.equal(text.status, 200);
    assert.equal(text.headers.get('content-type'), 'application/json');
    assert.equal(await text.text(), 'plain string');

    const object = await fetch(`${url}/`, { headers: auth });
    assert.equal(object.status, 200);
    assert.deepEqual(await object.json(), { crawls: [] });
  });

  it('answers 502 for a function error or timeout and 429 when throttled', async () => {
    const failing = await serve(() => {
      throw new Error('bug');
    });
    const failed = await fetch(`${failing.url}/`, { headers: auth });
    assert.equal(failed.status, 502);
    assert.deepEqual(await failed.json(), { message: 'Internal Server Error' });

    const slow = await serve(() => delay(500), { timeoutSeconds: 0.1 });
    assert.equal((await fetch(`${slow.url}/`, { headers: auth })).status, 502);
    assert.equal(slow.lambda.stats().timeouts, 1);

    const disabled = await serve(() => 'never', { reservedConcurrency: 0 });
    assert.equal((await fetch(`${disabled.url}/`, { headers: auth })).status, 429);
  });

  it('lets every request in with AuthType NONE and refuses bodies over the payload limit', async () => {
    const open = await serve(() => ({ statusCode: 200, body: 'open' }), {
      authType: 'NONE',
      maxBodyBytes: 10,
    });
    const response = await fetch(`${open.url}/`);
    assert.equal(await response.text(), 'open');
    const big = await fetch(`${open.url}/`, { method: 'POST', body: 'x'.repeat(11) });
    assert.equal(big.status, 413);
    assert.equal(open.lambda.stats().invocations, 1);
  });

  it('makes a random token when none is given', () => {
    const lambda = new LocalLambda({ name: 'x', handler: (() => 1) as never });
    const a = new FunctionUrlServer({ lambda });
    const b = new FunctionUrlServer({ lambda });
    assert.match(a.token, /^[0-9a-f]{64}$/);
    assert.notEqual(a.token, b.token);
  });
});
