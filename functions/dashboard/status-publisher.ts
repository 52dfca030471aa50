import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DashboardSnapshot } from '../core/dashboard-snapshot.ts';
import { STATUS_FILE } from './crawl-folder-reader.ts';

/** How often a running crawl rewrites status.json. */
export const STATUS_EVERY_MS = 1000;

/**
 * Publishes a running crawl's live state to `<outDir>/status.json` every second, for
 * `crawlstack ui --out DIR` in another process (the crawl's state.sqlite is locked while it runs).
 * Written to a temporary file and renamed, so a reader never sees half of it. Returns a stop
 * function that writes a last status, with the crawl's final state when it is given (`done`,
 * `failed`, `interrupted`): a status left at `running` would claim a crawl that has ended.
 */
export function publishStatus(
  outDir: string,
  seeds: readonly string[],
  read: () => Partial<DashboardSnapshot>,
  everyMs = STATUS_EVERY_MS,
): (finalState?: string) => void {
  const path = join(outDir, STATUS_FILE);
  const write = (state?: string) => {
    const status = { ...read(), ...(state ? { state } : {}), at: Date.now(), seeds };
    writeFileSync(`${path}.tmp`, JSON.stringify(status));
    renameSync(`${path}.tmp`, path);
  };
  const timer = setInterval(() => {
    try {
      write();
    } catch {
      // a full disk or a removed folder: the crawl itself reports that
    }
  }, everyMs);
  timer.unref();
  return (finalState?: string) => {
    clearInterval(timer);
    try {
      write(finalState);
    } catch {
      // as above
    }
  };
}
