/**
 * Lambda's recursive loop detection, as the stand-in models it. Lambda counts, in the X-Ray trace
 * header that travels with an event, how many times one chain of events has invoked a function:
 *
 *   invocation ── _X_AMZN_TRACE_ID ──► SDK call (X-Amzn-Trace-Id, the recursion-detection
 *   middleware adds it when AWS_LAMBDA_FUNCTION_NAME is set) ──► SQS keeps it as the message's
 *   AWSTraceHeader ──► the event source reads it ──► next invocation's _X_AMZN_TRACE_ID
 *
 * The count lives in the header's `Lineage` field, one `<hash>:<count>` entry per function (the
 * hash names the function; entries are joined with `|`). A function whose `RecursiveLoop` is
 * `Terminate` (the default) is not invoked for an event that has already invoked it the limit's
 * number of times (16 on AWS).
 */
import { createHash, randomBytes } from 'node:crypto';

/** `RecursiveLoop` of `AWS::Lambda::Function`. */
export type RecursiveLoop = 'Allow' | 'Terminate';

/** The lineage key of a function: 8 hex digits of its ARN's hash. */
export function lineageKey(functionArn: string): string {
  return createHash('sha256').update(functionArn).digest('hex').slice(0, 8);
}

function fields(header: string): [string, string][] {
  return header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.includes('='))
    .map((part) => [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)]);
}

/** The `Lineage` entries of a trace header (key -> count). */
function lineageOf(header: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (header === undefined) return out;
  const lineage = fields(header).find(([name]) => name === 'Lineage')?.[1] ?? '';
  for (const entry of lineage.split('|')) {
    const [key, count] = entry.split(':');
    const n = Number(count);
    if (key && Number.isInteger(n) && n >= 0) out.set(key, Math.max(out.get(key) ?? 0, n));
  }
  return out;
}

/** How many times the chain of events behind `header` has invoked the function. */
export function lineageCount(header: string | undefined, functionArn: string): number {
  return lineageOf(header).get(lineageKey(functionArn)) ?? 0;
}

/**
 * The trace header of an invocation of `functionArn` for events carrying `headers` (one per
 * record of a batch): the first record's root (a new one without any), every function's highest
 * count of the batch, and this function's count plus one.
 */
export function invocationTrace(headers: readonly (string | undefined)[], functionArn: string): string {
  const lineage = new Map<string, number>();
  for (const header of headers) {
    for (const [key, count] of lineageOf(header)) lineage.set(key, Math.max(lineage.get(key) ?? 0, count));
  }
  const key = lineageKey(functionArn);
  lineage.set(key, (lineage.get(key) ?? 0) + 1);
  const first = headers.find((h) => h !== undefined);
  const root =
    (first === undefined ? undefined : fields(first).find(([name]) => name === 'Root')?.[1]) ??
    `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
  const entries = [...lineage].map(([k, n]) => `${k}:${n}`).join('|');
  return `Root=${root};Parent=${randomBytes(8).toString('hex')};Sampled=0;Lineage=${entries}`;
}
