/**
 * The real documentation sites the benchmarks crawl: Debian's postgresql-doc-15 and python3-doc,
 * served by nginx on a loopback address (installed with apt-get when missing and running as root).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface Site {
  name: string;
  dir: string;
  start: string;
  /** Reachable HTML pages, as counted when the benchmark was written (the figures). */
  expected: number;
  debianPackage: string;
}

export const DOC_SITES: Site[] = [
  {
    name: 'postgresql-doc-15',
    dir: '/usr/share/doc/postgresql-doc-15/html',
    start: '/index.html',
    expected: 1170,
    debianPackage: 'postgresql-doc-15',
  },
  {
    name: 'python3-doc',
    dir: '/usr/share/doc/python3-doc/html',
    start: '/index.html',
    expected: 527,
    debianPackage: 'python3-doc',
  },
];

/** Installs the sites' Debian packages and nginx when missing (as root), or says what to install. */
export function ensureSystemPackages(sites: Site[]): void {
  const missing = sites.filter((s) => !existsSync(s.dir)).map((s) => s.debianPackage);
  if (!existsSync('/usr/sbin/nginx')) missing.push('nginx-light');
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`install first: sudo apt-get install -y ${missing.join(' ')}`);
  }
  console.error(`installing ${missing.join(' ')} with apt-get...`);
  const install = spawnSync('apt-get', ['install', '-y', ...missing], { stdio: 'inherit' });
  if (install.status !== 0) {
    run('apt-get', ['update']);
    run('apt-get', ['install', '-y', ...missing]);
  }
}

/** nginx with one worker on a fresh loopback address; logs path, status and request timing. */
export async function startNginx(
  root: string,
  work: string,
): Promise<{ origin: string; stop(): Promise<void> }> {
  const host = '127.0.0.21';
  const port = await freePort(host);
  for (const dir of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
    mkdirSync(join(work, dir), { recursive: true });
  const conf = `
worker_processes 1;
daemon off;
pid ${work}/nginx.pid;
error_log ${work}/error.log warn;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  log_format bench '$connection $request_uri $status $sent_http_content_type';
  access_log ${work}/access.log bench;
  client_body_temp_path ${work}/body;
  proxy_temp_path ${work}/proxy;
  fastcgi_temp_path ${work}/fastcgi;
  uwsgi_temp_path ${work}/uwsgi;
  scgi_temp_path ${work}/scgi;
  sendfile on;
  gzip on;
  keepalive_requests 100000;
  server {
    listen ${host}:${port};
    root ${root};
    index index.html;
  }
}
`;
  writeFileSync(join(work, 'nginx.conf'), conf);
  const child = spawn(
    '/usr/sbin/nginx',
    ['-p', work, '-c', join(work, 'nginx.conf'), '-e', join(work, 'error.log')],
    {
      stdio: 'inherit',
    },
  );
  await waitForPort(host, port);
  return {
    origin: `http://${host}:${port}`,
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => done());
        child.kill('SIGQUIT');
      }),
  };
}

/** Runs a command to its end; throws when it fails. */
export function run(command: string, args: string[], cwd = ROOT): void {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed with ${result.status}`);
}

function freePort(host: string): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

async function waitForPort(host: string, port: number): Promise<void> {
  const { connect } = await import('node:net');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((done) => {
      const socket = connect(port, host, () => {
        socket.end();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nginx did not start on ${host}:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
