/**
 * `npm run cloud:local` writes where its API is and how to call it to `.tmp/cloud-local.json` in
 * the project (beside what it prints), and `crawlstack cloud` reads it when no API is given, so
 * the local stack needs no copy and paste. The file holds a secret (the bearer token): mode 0600.
 *
 * Whoever can write such a file decides where `crawlstack cloud` sends its requests (and the
 * file's token), so it is read only from the folder the command runs in (not from a parent), and
 * only when it is this user's, not writable by group or others, and names a loopback API (the
 * stand-in runs on this machine); otherwise it is ignored with a one-line warning.
 */
import { lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
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

/**
 * The `.tmp/cloud-local.json` of the project folder `dir` (not of a parent), with its path;
 * undefined if there is none, or none to trust: `warn` says why one is ignored.
 */
export function findCloudLocalInfo(
  dir: string,
  warn: (line: string) => void = () => undefined,
): { path: string; info: CloudLocalInfo } | undefined {
  const path = join(dir, CLOUD_LOCAL_FILE);
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return undefined;
  const ignored = (why: string) => {
    warn(`ignoring ${path}: ${why}`);
    return undefined;
  };
  if (!stat.isFile()) return ignored('not a regular file (a symbolic link?)');
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return ignored(`owned by user ${stat.uid}, not by you (${uid})`);
  if ((stat.mode & 0o022) !== 0) {
    return ignored(
      `writable by ${stat.mode & 0o020 ? 'its group' : 'others'} (mode ${(stat.mode & 0o777).toString(8)}): chmod 600 it`,
    );
  }
  let info: CloudLocalInfo;
  try {
    info = JSON.parse(readFileSync(path, 'utf8')) as CloudLocalInfo;
  } catch {
    return undefined; // half-written or damaged: as if absent
  }
  if (typeof info.api !== 'string' || typeof info.pid !== 'number') return undefined;
  if (!isLoopbackUrl(info.api)) {
    return ignored(
      `its API ${JSON.stringify(info.api.slice(0, 200))} is not on this machine (npm run cloud:local serves on 127.0.0.1)`,
    );
  }
  return { path, info };
}

/** Whether `url` is http(s) on a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopbackUrl(url: string): boolean {
  const parsed = URL.parse(url);
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return false;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
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
