/**
 * A test seam for fault injection, inert in production: the worker and the archiver call their
 * hook at each step that matters for durability, and only a hook built from `CRAWLSTACK_FAULT`
 * does anything. Each function builds its own hook from the same variable and only reaches its
 * own steps.
 *
 *   CRAWLSTACK_FAULT=after-claims:2,after-captures:1,before-ack:3,archive-after-index:1,throw-url:/poison
 *
 * `<step>:<n>` crashes the invocation the n-th time the step is reached: an
 * `InjectedCrashError` that the worker lets escape, so the invocation fails as if the process
 * had died there (nothing after the step happens, the whole batch returns to the queue).
 * `throw-url:<text>` makes every task whose URL contains the text throw an ordinary error, a
 * task whose processing always fails (it must end in the dead-letter queue).
 *
 * "The n-th time" is counted across every container when `CRAWLSTACK_FAULT_COUNTERS` names a
 * folder they share (the tests give each stack a new one): each reach of a step takes the next
 * number by creating `<step>.<k>` there with O_EXCL, which the file system grants to exactly
 * one thread or process. Without it each container counts for itself, and a stack of five
 * containers may crash five times per fault.
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';

/** Points the worker (and the archiver) report, in the order a record reaches them. */
export type FaultStep =
  /** URL-seen claims of a page's links are durable, the links are not queued yet. */
  | 'after-claims'
  /** A refill put the batch's own overflow in its host's back queue; nothing sent yet. */
  | 'after-backlog'
  /** The held groups' refills and re-sends are sent; other hosts' links not offered yet. */
  | 'after-sends'
  /** An offer started an idle group (its size written); the turn not sent yet. */
  | 'after-start'
  /** The batch's links are queued and its captures sent to the archiver; host ledgers not written. */
  | 'after-captures'
  /** Host ledgers written; the tasks the refills sent not yet taken out of the back queues. */
  | 'after-ledgers'
  /** Everything written; the batch response (which deletes the messages) not returned yet. */
  | 'before-ack'
  /** About to crawl a task (carries its URL). */
  | 'before-crawl'
  /** Archiver: a batch's WARC object is in S3, its index object not yet. */
  | 'archive-after-warc'
  /** Archiver: the index object is in S3; the response (which deletes the captures) not returned. */
  | 'archive-after-index'
  /** Archiver: the batch's pages are folded into their archive's state; the response not returned. */
  | 'archive-after-fold';

/** Called by the worker at each step; throws to inject a fault. */
export type FaultHook = (step: FaultStep, url?: string) => void;

/** The production hook: does nothing. */
export const NO_FAULTS: FaultHook = () => {};

/** The simulated death of the worker. Not a processing error: the worker never catches it. */
export class InjectedCrashError extends Error {
  readonly code = 'INJECTED_CRASH' as const;
  readonly step: FaultStep;
  constructor(step: FaultStep, n: number) {
    super(`injected crash ${step}:${n} (CRAWLSTACK_FAULT)`);
    this.name = 'InjectedCrashError';
    this.step = step;
  }
}

/** An ordinary processing error raised on purpose (`throw-url`). */
export class InjectedFailureError extends Error {
  readonly code = 'INJECTED_FAILURE' as const;
  constructor(url: string) {
    super(`injected failure for ${url} (CRAWLSTACK_FAULT throw-url)`);
    this.name = 'InjectedFailureError';
  }
}

const CRASH_STEPS = new Set<FaultStep>([
  'after-claims',
  'after-captures',
  'before-ack',
  'archive-after-warc',
  'archive-after-index',
  'archive-after-fold',
]);

/** Counts the reaches of one step; resolves which reach this is (1, 2, ...). */
type ReachCounter = (step: FaultStep) => number;

/** Counts in this container only. */
function localCounter(): ReachCounter {
  const seen = new Map<FaultStep, number>();
  return (step) => {
    const n = (seen.get(step) ?? 0) + 1;
    seen.set(step, n);
    return n;
  };
}

/** Counts across every container that shares `dir` (see the module comment). */
function sharedCounter(dir: string): ReachCounter {
  // The lowest number this container has not seen taken yet: numbers below it are all taken.
  const next = new Map<FaultStep, number>();
  return (step) => {
    for (let k = next.get(step) ?? 1; ; k++) {
      try {
        closeSync(openSync(join(dir, `${step}.${k}`), 'wx'));
        next.set(step, k + 1);
        return k;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  };
}

/**
 * Builds the hook from the variable's value; `undefined` or empty gives {@link NO_FAULTS}.
 * `counterDir` (CRAWLSTACK_FAULT_COUNTERS): count reaches across the containers sharing it.
 */
export function faultHookFromSpec(spec: string | undefined, counterDir?: string): FaultHook {
  if (spec === undefined || spec.trim() === '') return NO_FAULTS;
  const crashes = new Map<FaultStep, number>();
  const throwUrls: string[] = [];
  for (const part of spec.split(',')) {
    const text = part.trim();
    const colon = text.indexOf(':');
    const name = colon < 0 ? text : text.slice(0, colon);
    const arg = colon < 0 ? '' : text.slice(colon + 1);
    if (name === 'throw-url' && arg !== '') {
      throwUrls.push(arg);
    } else if (CRASH_STEPS.has(name as FaultStep) && /^\d+$/.test(arg) && Number(arg) > 0) {
      crashes.set(name as FaultStep, Number(arg));
    } else {
      throw new Error(`CRAWLSTACK_FAULT: cannot read ${JSON.stringify(text)}`);
    }
  }
  const count = counterDir === undefined || counterDir === '' ? localCounter() : sharedCounter(counterDir);
  const passed = new Set<FaultStep>();
  return (step, url) => {
    if (step === 'before-crawl') {
      if (url !== undefined && throwUrls.some((t) => url.includes(t))) throw new InjectedFailureError(url);
      return;
    }
    const at = crashes.get(step);
    // Once past its number, a step costs nothing more (no file to create).
    if (at === undefined || passed.has(step)) return;
    const n = count(step);
    if (n >= at) passed.add(step);
    if (n === at) throw new InjectedCrashError(step, at);
  };
}
