/**
 * IAM for the stand-in endpoint: who is calling (the access key id of the SigV4 `Authorization`
 * header), and whether that caller's policies allow what the request needs (see
 * `iam-actions.ts`). Policies are evaluated by `@cloud-copilot/iam-simulate`, which implements
 * AWS's evaluation logic (identity and resource policies, explicit denies, every condition
 * operator), not by rules of our own.
 *
 * Callers are registered by access key id: each Lambda container gets credentials of its own
 * that the endpoint maps to its function's execution role, as Lambda hands every execution
 * environment the role's temporary credentials. A key nobody registered is an administrator
 * (tests, provisioning, benchmarks), allowed everything.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { getDenialReasons, runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import type { IamAuthorization } from './iam-actions.ts';

/** A role session the endpoint knows by its access key id. */
export interface IamCaller {
  /** Name used in logs and in {@link IamEnforcer.observed} (the function's logical id). */
  name: string;
  /** `arn:aws:sts::<account>:assumed-role/<role>/<session>`, as AWS names a Lambda's caller. */
  sessionArn: string;
  /** `arn:aws:iam::<account>:role/<role>`. */
  roleArn: string;
  accountId: string;
  /** Extra global condition keys of this caller (`lambda:SourceFunctionArn`). */
  context?: Record<string, string>;
  /** The role's identity policies: inline, customer managed and AWS managed. */
  policies: { name: string; document: unknown }[];
}

/** Why a request was refused, with the message AWS would put in its error. */
export interface IamDenial {
  caller: IamCaller;
  action: string;
  resource: string;
  /** Which policy refused: no allow anywhere (`implicit`), or an explicit deny. */
  reason: 'implicit' | 'explicit-identity' | 'explicit-resource' | 'evaluation-error';
  /** `User: arn:aws:sts::... is not authorized to perform: ... on resource: ... because ...`. */
  message: string;
}

/** An evaluation's result: allowed, or the reason of the denial (and what went wrong, if it failed). */
type Decision = { reason: IamDenial['reason'] | 'allowed'; detail?: string };

/** Per caller, per action: how many requests were allowed and denied, and on which resources. */
export type ObservedActions = Record<
  string,
  Record<string, { allowed: number; denied: number; resources: string[] }>
>;

/** Distinct resources kept per caller and action (enough to see which tables, queues, buckets). */
const MAX_RESOURCES = 20;

/** The access key id a SigV4-signed request (header or presigned query) carries. */
export function accessKeyIdOf(headers: IncomingHttpHeaders, rawUrl?: string): string | undefined {
  const authorization = headers.authorization;
  const header = Array.isArray(authorization) ? authorization[0] : authorization;
  const fromHeader = header === undefined ? null : /Credential=([^/,\s]+)\//.exec(header);
  if (fromHeader?.[1] !== undefined) return fromHeader[1];
  if (rawUrl?.includes('X-Amz-Credential=')) {
    const credential = new URL(rawUrl, 'http://local').searchParams.get('X-Amz-Credential');
    return credential?.split('/')[0] || undefined;
  }
  return undefined;
}

/**
 * The region of a SigV4 credential scope (`Credential=AKID/date/region/service/aws4_request`), from
 * the header or, for a presigned URL, its `X-Amz-Credential` parameter.
 */
export function signingRegionOf(headers: IncomingHttpHeaders, rawUrl?: string): string | undefined {
  const authorization = headers.authorization;
  const header = Array.isArray(authorization) ? authorization[0] : authorization;
  if (header !== undefined) return /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(header)?.[1];
  if (rawUrl?.includes('X-Amz-Credential=')) {
    return new URL(rawUrl, 'http://local').searchParams.get('X-Amz-Credential')?.split('/')[2] || undefined;
  }
  return undefined;
}

/**
 * Why S3 refuses a presigned (query-string SigV4) request by its dates, in S3's words, or
 * undefined: signed at `X-Amz-Date`, valid for `X-Amz-Expires` seconds (1 to 604,800).
 */
export function presignedRefusal(rawUrl: string, nowMs: number): string | undefined {
  if (!rawUrl.includes('X-Amz-Credential=')) return undefined;
  const query = new URL(rawUrl, 'http://local').searchParams;
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(query.get('X-Amz-Date') ?? '');
  const expires = Number(query.get('X-Amz-Expires'));
  if (m === null || !Number.isInteger(expires)) {
    return 'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.';
  }
  if (expires < 1 || expires > 604_800) {
    return 'X-Amz-Expires must be less than a week (in seconds) that is 604800';
  }
  const signedAt = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return nowMs > signedAt + expires * 1000 ? 'Request has expired' : undefined;
}

/** Condition keys a policy document tests, lowercased (so only those go into the cache key). */
function conditionKeys(document: unknown, into: Set<string>): void {
  const statements = (document as { Statement?: unknown } | null)?.Statement;
  for (const statement of Array.isArray(statements) ? statements : [statements]) {
    const condition = (statement as { Condition?: unknown } | null)?.Condition;
    if (condition === null || typeof condition !== 'object') continue;
    for (const operands of Object.values(condition as Record<string, unknown>)) {
      if (operands !== null && typeof operands === 'object') {
        for (const key of Object.keys(operands as Record<string, unknown>)) into.add(key.toLowerCase());
      }
    }
  }
}

/** The resource whose policy applies: the queue itself, or the bucket of an object. */
function policyHolder(resource: string): string {
  if (resource.startsWith('arn:aws:s3:::')) return resource.split('/')[0] ?? resource;
  return resource.replace(/\/index\/.*$/, '');
}

function accountOf(resource: string, fallback: string): string {
  const account = resource.split(':')[4];
  return account === undefined || account === '' ? fallback : account;
}

/** AWS's wording of an authorization failure (SQS writes the action in lower case, S3 quotes the ARN). */
export function denialMessage(
  sessionArn: string,
  action: string,
  resource: string,
  reason: IamDenial['reason'],
): string {
  const service = action.split(':')[0];
  const shownAction = service === 'sqs' ? action.toLowerCase() : action;
  const shownResource = service === 's3' ? `"${resource}"` : resource;
  const why =
    reason === 'explicit-identity'
      ? 'with an explicit deny in an identity-based policy'
      : reason === 'explicit-resource'
        ? 'with an explicit deny in a resource-based policy'
        : `because no identity-based policy allows the ${shownAction} action`;
  return `User: ${sessionArn} is not authorized to perform: ${shownAction} on resource: ${shownResource} ${why}`;
}

/** Registered callers, resource policies, decisions and what was observed. */
export class IamEnforcer {
  readonly #callers = new Map<string, IamCaller & { keys: Set<string> }>();
  readonly #resourcePolicies = new Map<string, unknown>();
  readonly #resourceKeys = new Set<string>();
  readonly #cache = new Map<string, Decision>();
  #observed: ObservedActions = {};

  /** Maps `accessKeyId` to `caller`: its requests are evaluated against `caller.policies`. */
  register(accessKeyId: string, caller: IamCaller): void {
    const keys = new Set<string>();
    for (const policy of caller.policies) conditionKeys(policy.document, keys);
    this.#callers.set(accessKeyId, { ...caller, keys });
  }

  unregister(accessKeyId: string): void {
    this.#callers.delete(accessKeyId);
  }

  /** The caller an access key id belongs to; undefined for an administrator. */
  caller(accessKeyId: string | undefined): IamCaller | undefined {
    return accessKeyId === undefined ? undefined : this.#callers.get(accessKeyId);
  }

  /** Sets the resource policy of a queue (its ARN) or a bucket (`arn:aws:s3:::bucket`). */
  setResourcePolicy(resourceArn: string, document: unknown): void {
    this.#resourcePolicies.set(resourceArn, document);
    conditionKeys(document, this.#resourceKeys);
    this.#cache.clear();
  }

  /** Requests allowed and denied per caller and action since the start (or the last reset). */
  observed(): ObservedActions {
    return structuredClone(this.#observed);
  }

  resetObserved(): void {
    this.#observed = {};
  }

  /**
   * Evaluates every authorization a request needs, in order, and returns the first denial (or
   * undefined: allowed, or not a registered caller). `count` false: an internal repeat of a
   * request already counted.
   */
  async check(
    accessKeyId: string | undefined,
    authorizations: readonly IamAuthorization[],
    region: string,
    count = true,
  ): Promise<IamDenial | undefined> {
    const caller = accessKeyId === undefined ? undefined : this.#callers.get(accessKeyId);
    if (caller === undefined) return undefined;
    for (const authorization of authorizations) {
      const { reason, detail } = await this.#decide(caller, authorization, region);
      if (count) {
        const byAction = this.#observed[caller.name] ?? {};
        this.#observed[caller.name] = byAction;
        const entry = byAction[authorization.action] ?? { allowed: 0, denied: 0, resources: [] };
        // Objects by bucket (`bucket/*`): keys would crowd out everything else.
        const resource = authorization.resource.replace(/^(arn:aws:s3:::[^/]+)\/.*$/, '$1/*');
        if (!entry.resources.includes(resource) && entry.resources.length < MAX_RESOURCES) {
          entry.resources.push(resource);
        }
        byAction[authorization.action] = entry;
        if (reason === 'allowed') entry.allowed += 1;
        else entry.denied += 1;
      }
      if (reason !== 'allowed') {
        return {
          caller,
          action: authorization.action,
          resource: authorization.resource,
          reason,
          message:
            detail === undefined
              ? denialMessage(caller.sessionArn, authorization.action, authorization.resource, reason)
              : detail,
        };
      }
    }
    return undefined;
  }

  async #decide(
    caller: IamCaller & { keys: Set<string> },
    authorization: IamAuthorization,
    region: string,
  ): Promise<Decision> {
    const now = new Date();
    const context: Record<string, string | string[]> = {
      'aws:SecureTransport': 'true', // SDK calls to AWS are always TLS
      'aws:CurrentTime': now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      'aws:EpochTime': String(Math.floor(now.getTime() / 1000)),
      'aws:PrincipalArn': caller.roleArn,
      'aws:PrincipalAccount': caller.accountId,
      'aws:PrincipalType': 'AssumedRole',
      'aws:RequestedRegion': region,
      'aws:ViaAWSService': 'false',
      ...caller.context,
      ...authorization.context,
    };
    // Only the keys some policy tests can change a decision: they alone go into the cache key.
    const relevant: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(context)) {
      const lower = key.toLowerCase();
      if (caller.keys.has(lower) || this.#resourceKeys.has(lower)) relevant[key] = value;
    }
    const cacheKey = `${caller.sessionArn}\n${authorization.action}\n${authorization.resource}\n${JSON.stringify(relevant)}`;
    const cached = this.#cache.get(cacheKey);
    if (cached !== undefined) return cached;

    const resourcePolicy = this.#resourcePolicies.get(policyHolder(authorization.resource));
    const simulation: Simulation = {
      request: {
        principal: caller.sessionArn,
        action: authorization.action,
        resource: {
          resource: authorization.resource,
          accountId: accountOf(authorization.resource, caller.accountId),
        },
        contextVariables: relevant,
      },
      identityPolicies: caller.policies.map((p) => ({ name: p.name, policy: p.document })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy === undefined ? {} : { resourcePolicy }),
    };
    const result = await runSimulation(simulation, {});
    let decision: Decision;
    if (result.resultType === 'error') {
      decision = {
        reason: 'evaluation-error',
        detail: `the stand-in could not evaluate ${authorization.action} on ${authorization.resource}: ${JSON.stringify(result.errors)}`,
      };
    } else if (result.overallResult === 'Allowed') {
      decision = { reason: 'allowed' };
    } else {
      const analyses =
        result.resultType === 'single' ? [result.result.analysis] : result.results.map((r) => r.analysis);
      const denials = analyses.flatMap((a) => getDenialReasons(a));
      const explicit = denials.find((d) => d.denialType === 'Explicit');
      decision = {
        reason:
          explicit === undefined
            ? 'implicit'
            : explicit.policyType === 'resource'
              ? 'explicit-resource'
              : 'explicit-identity',
      };
    }
    if (this.#cache.size > 50_000) this.#cache.clear();
    this.#cache.set(cacheKey, decision);
    return decision;
  }
}
