/**
 * The memory that one process's response bodies may hold beyond a small threshold each, shared by
 * all its fetches. Most pages are far below the threshold (the realistic bench's pages are 30-100
 * KB) and never ask for anything; a body that grows past it keeps growing only while it holds a
 * share of the budget as large as its byte cap (a large-body slot), and otherwise waits for one
 * with its reading paused (backpressure on the socket). So N fetches at once hold at most
 * N × threshold + budget, where without it they held N × cap.
 *
 * Shares are handed out first come, first served: a claim waits until enough of the budget is free
 * for it and no claim made before it still waits, so a large claim is never overtaken forever by
 * small ones. No deadlock: a waiting body holds no share, and a holder needs nothing else to
 * finish (its own bytes, bounded by its cap and the fetch's timeouts), so every share comes back.
 */

/**
 * Default bytes a body may hold without a share: 256 KiB, several times a typical page (the
 * realistic bench's are 30-100 KB), small enough that a host's page below it costs little even
 * with the copies its crawl step makes (about 5 × its size: `npm run bench:worker-memory`).
 */
export const BODY_THRESHOLD_BYTES = 256 * 1024;

/**
 * What a large body costs per byte of its cap from its fetch to the end of its crawl step (the
 * body, the copy handed over, the decoded text, the WARC record and its gzip): 10 MiB pages
 * measured 45 MiB each (`npm run bench:worker-memory -- --hostile-every 1 --hosts 1,2,4,8 --modes
 * none`). The cloud's memory model uses the same figure (lambda-settings.ts, BODY_COST_PER_BYTE).
 */
export const STEP_COST_PER_BYTE = 5;

/**
 * Large bodies the embedded crawler lets run at once (of its `concurrency` fetches): at the default
 * 10 MiB cap, 4 × 50 MiB while they are parsed and stored, where 16 fetches at once could take 800.
 */
export const EMBEDDED_LARGE_BODIES = 4;

/** What a budget is sized with. */
export interface BodyBudgetOptions {
  /** Bytes the large bodies together may hold beyond their thresholds; at least 1. */
  budgetBytes: number;
  /** Bytes a body may hold without a share (default {@link BODY_THRESHOLD_BYTES}). */
  thresholdBytes?: number;
  /**
   * Memory a large body costs per byte of its cap while it holds its share (default 1: the body
   * alone). A share kept until its crawl step ends (body-share-scope.ts) also pays for what the
   * step builds from the body: its copy, the decoded text, the WARC record and its gzip.
   */
  costPerByte?: number;
}

/** Gives back a share, or withdraws a claim still waiting; a second call does nothing. */
export type ReleaseShare = () => void;

interface Claim {
  readonly bytes: number;
  readonly granted: () => void;
  state: 'waiting' | 'held' | 'released';
}

/** Raised for a budget or threshold that is not a positive whole number of bytes. */
export class BodyBudgetError extends Error {
  override readonly name = 'BodyBudgetError';
  readonly code = 'BODY_BUDGET_INVALID';
}

/** A FIFO semaphore over bytes: the large-body shares of one process. */
export class BodyBudget {
  readonly #budgetBytes: number;
  readonly #thresholdBytes: number;
  readonly #costPerByte: number;
  readonly #waiting: Claim[] = [];
  #heldBytes = 0;
  #holders = 0;

  constructor(options: BodyBudgetOptions) {
    const threshold = options.thresholdBytes ?? BODY_THRESHOLD_BYTES;
    if (!Number.isSafeInteger(options.budgetBytes) || options.budgetBytes < 1) {
      throw new BodyBudgetError(
        `budgetBytes must be a positive integer of bytes, got ${options.budgetBytes}`,
      );
    }
    if (!Number.isSafeInteger(threshold) || threshold < 1) {
      throw new BodyBudgetError(`thresholdBytes must be a positive integer of bytes, got ${threshold}`);
    }
    const cost = options.costPerByte ?? 1;
    if (!(cost >= 1 && Number.isFinite(cost))) {
      throw new BodyBudgetError(`costPerByte must be a finite number of at least 1, got ${cost}`);
    }
    this.#budgetBytes = options.budgetBytes;
    this.#thresholdBytes = threshold;
    this.#costPerByte = cost;
  }

  /** Bytes a body may hold without a share. */
  get thresholdBytes(): number {
    return this.#thresholdBytes;
  }

  /** Bytes the shares add up to. */
  get budgetBytes(): number {
    return this.#budgetBytes;
  }

  /** Bytes held by shares now. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** Bodies holding a share now. */
  get holders(): number {
    return this.#holders;
  }

  /** Claims waiting for a share. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Bodies of `capBytes` that fit the budget at once (the large-body slots): at least one, since a
   * claim larger than the whole budget is granted alone.
   */
  slotsFor(capBytes: number): number {
    return Math.max(1, Math.floor(this.#budgetBytes / Math.max(1, capBytes * this.#costPerByte)));
  }

  /**
   * Claims the share of a body of cap `capBytes`: `capBytes` × `costPerByte`, cut to the whole
   * budget (so that any claim can be met).
   * `granted` is called once the share is held: at once, inside this call, if it is free and no
   * claim waits before it, else later, in the order of the claims. The returned function gives the
   * share back, or withdraws the claim if it still waits (then `granted` is never called).
   */
  claim(capBytes: number, granted: () => void): ReleaseShare {
    const claim: Claim = {
      bytes: Math.min(this.#budgetBytes, Math.max(1, Math.ceil(capBytes * this.#costPerByte))),
      granted,
      state: 'waiting',
    };
    this.#waiting.push(claim);
    this.#grant();
    return () => this.#release(claim);
  }

  #release(claim: Claim): void {
    if (claim.state === 'released') return;
    if (claim.state === 'waiting') {
      claim.state = 'released';
      this.#waiting.splice(this.#waiting.indexOf(claim), 1);
    } else {
      claim.state = 'released';
      this.#heldBytes -= claim.bytes;
      this.#holders -= 1;
    }
    // A withdrawn head may have blocked smaller claims behind it.
    this.#grant();
  }

  /** Grants waiting claims in order while the first one fits. */
  #grant(): void {
    while (this.#waiting.length > 0) {
      const next = this.#waiting[0]!;
      if (this.#heldBytes + next.bytes > this.#budgetBytes) return;
      this.#waiting.shift();
      next.state = 'held';
      this.#heldBytes += next.bytes;
      this.#holders += 1;
      next.granted();
    }
  }
}
