/**
 * Chaos for the stand-in's Lambda functions: an execution environment that dies at a random
 * point of an invocation, as one does on AWS when its host fails, it runs out of memory, or the
 * runtime is killed. The container's thread is terminated wherever it is (between two awaits, in
 * the middle of a request), nothing after that point happens, its memory is gone, and the
 * invocation fails; an SQS event source then returns the whole batch after the queue's
 * visibility timeout. Decisions come from a seeded generator, so a seed repeats the same draws
 * (where the kills land still depends on timing).
 */
import { mulberry32 } from '../functions/cache-study/cache-policies.ts';

/** Random kills of one function's containers. */
export interface ChaosOptions {
  /** Chance that an invocation gets a kill scheduled, 0 to 1. */
  killProbability: number;
  /** Seed of the draws. */
  seed: number;
  /**
   * The kill comes at a uniform time in [0, withinMs) after the invocation starts (none when the
   * invocation ended first). Default: the median duration of the function's recent invocations
   * (500 ms before there are any), so about half the scheduled kills land inside one.
   */
  withinMs?: number;
}

/** One kill, with `performance.now()` times of this process (the fixture servers' clock). */
export interface ChaosKill {
  /**
   * When the killed invocation started, and when its container's thread was gone: whatever it
   * sent left it before `killedAt` (this process may read it a little later).
   */
  startedAt: number;
  killedAt: number;
}

/** A small deterministic generator (mulberry32): a seed repeats a run's draws. */
export function seededRandom(seed: number): () => number {
  return mulberry32(seed);
}

/** Checks the options; throws a message naming the setting. */
export function checkChaos(name: string, chaos: ChaosOptions): void {
  const p = chaos.killProbability;
  if (!(Number.isFinite(p) && p >= 0 && p <= 1)) {
    throw new Error(`chaos.${name}.killProbability must be from 0 to 1, got ${p}`);
  }
  if (!Number.isInteger(chaos.seed))
    throw new Error(`chaos.${name}.seed must be an integer, got ${chaos.seed}`);
  if (chaos.withinMs !== undefined && !(Number.isFinite(chaos.withinMs) && chaos.withinMs > 0)) {
    throw new Error(`chaos.${name}.withinMs must be a positive number of ms, got ${chaos.withinMs}`);
  }
}
