/**
 * `npm run cloud:local` writes where its API is and how to call it to `.tmp/cloud-local.json` in
 * the project (beside what it prints), and `crawlstack cloud` reads it when no API is given, so
 * the local stack needs no copy and paste. The file holds a secret (the bearer token): mode 0600.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The file, relative to the project folder. */
export const CLOUD_LOCAL_FILE = join('.tmp', 'cloud-local.json');

/** What the file says. */
export interface CloudLocalInfo {
  api: string;
  /** `bearer`: send `token`; `sigv4`: sign for service lambda in `region`. */
  auth: 'bearer' | 'sigv4';
  token?: string;
  region: string;
  /** The stand-in endpoint (S3, SQS, DynamoDB). */
  endpoint: string;
  /** The cloud:local process: a file whose process is gone is stale. */
  pid: number;
}

/** Writes the file at `path` (the project's {@link CLOUD_LOCAL_FILE}); returns the path. */
export function writeCloudLocalInfo(path: string, info: CloudLocalInfo): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  return path;
}

/** Removes the file if it is still this process's (a newer cloud:local may have replaced it). */
export function removeCloudLocalInfo(path: string, pid: number): void {
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as Partial<CloudLocalInfo>;
    if (info.pid === pid) rmSync(path, { force: true });
  } catch {
    // gone already, or not ours to judge
  }
}

/** The nearest `.tmp/cloud-local.json` from `dir` up to the root, with its path; undefined if none. */
export function findCloudLocalInfo(dir: string): { path: string; info: CloudLocalInfo } | undefined {
  for (let current = dir; ; current = dirname(current)) {
    const path = join(current, CLOUD_LOCAL_FILE);
    if (existsSync(path)) {
      try {
        const info = JSON.parse(readFileSync(path, 'utf8')) as CloudLocalInfo;
        if (typeof info.api === 'string' && typeof info.pid === 'number') return { path, info };
      } catch {
        // half-written or damaged: as if absent
      }
    }
    if (dirname(current) === current) return undefined;
  }
}

/** Whether process `pid` is alive (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
