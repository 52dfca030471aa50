/**
 * Keeps a large body's share of the body budget (body-budget.ts) until the crawl step that
 * fetched it ends, not only until the body is received: the step builds several copies of the
 * body (the one handed over, the decoded text, the WARC record and its gzip), so a 10 MiB page
 * costs several times its size until the step is over (`npm run bench:worker-memory`). A step
 * run inside {@link withBodyShareScope} gives its share back when it returns or throws.
 *
 * A step keeps at most one share: a second fetch in the same scope gives the first one back
 * before it starts, so a step never waits for a share it holds itself (no deadlock).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ReleaseShare } from './body-budget.ts';

/** The shares of one crawl step. */
export class BodyShareScope {
  #kept: ReleaseShare | undefined;
  #ended = false;

  /** A fetch of this step starts: the share of its previous body, if kept, goes back. */
  fetchStarts(): void {
    this.#giveBack();
  }

  /** Keeps a body's share until the step ends (at once if it has ended). */
  keep(release: ReleaseShare): void {
    this.#giveBack();
    if (this.#ended) release();
    else this.#kept = release;
  }

  /** The step is over. */
  end(): void {
    this.#ended = true;
    this.#giveBack();
  }

  #giveBack(): void {
    const release = this.#kept;
    this.#kept = undefined;
    release?.();
  }
}

const scopes = new AsyncLocalStorage<BodyShareScope>();

/** The scope of the step running now, if it runs in one. */
export function currentBodyShareScope(): BodyShareScope | undefined {
  return scopes.getStore();
}

/** Runs one crawl step; a large body it fetched keeps its share until `step` settles. */
export async function withBodyShareScope<T>(step: () => Promise<T>): Promise<T> {
  const scope = new BodyShareScope();
  try {
    return await scopes.run(scope, step);
  } finally {
    scope.end();
  }
}
