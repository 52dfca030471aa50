import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DashboardSnapshot } from '../core/dashboard-snapshot.ts';
import { CrawlFolderReader } from '../dashboard/crawl-folder-reader.ts';
import { type DashboardServer, startDashboard } from '../dashboard/dashboard-server.ts';
import { publishStatus } from '../dashboard/status-publisher.ts';
import { folderOptions, optionsHelp, parseFolderCommand, UsageError } from './cli-options.ts';
import { print } from './terminal-text.ts';

const UI_OPTIONS = folderOptions({
  port: { type: 'string', arg: 'N', help: 'port (default 8484; 0: any free port)' },
  host: {
    type: 'string',
    arg: 'ADDR',
    help: 'address to listen on (default 127.0.0.1; the page has no login: keep it on loopback)',
  },
});

export const UI_HELP = `usage: crawlstack ui --out DIR [--port N] [--host ADDR]

Serves the dashboard of a crawl folder, finished or running (a running crawl publishes
DIR/status.json every second), on http://127.0.0.1:8484/ until Ctrl-C.

options:
${optionsHelp(UI_OPTIONS)}`;

/** The dashboard's port when none is given. */
export const DEFAULT_UI_PORT = 8484;

/** `crawlstack ui --out DIR [--port N]`: serves until SIGINT or SIGTERM. */
export async function uiCommand(argv: string[]): Promise<number> {
  const command = parseFolderCommand(argv, 'ui', UI_OPTIONS, UI_HELP);
  if (command === undefined) return 0;
  const { out: outDir, values } = command;
  if (!existsSync(join(outDir, 'pages.jsonl')) && !existsSync(join(outDir, 'status.json'))) {
    throw new UsageError(
      `ui: ${outDir} holds no crawl (no pages.jsonl or status.json); give the --out of a crawl`,
    );
  }
  const port = parsePort(values.port as string | undefined, '--port') ?? DEFAULT_UI_PORT;
  const reader = new CrawlFolderReader(outDir);
  // The first read takes what pages.jsonl holds (about 4 s for 600 MB): before the page asks.
  reader.read();
  const server = await startDashboard({
    view: () => reader.read(),
    port,
    host: (values.host as string) ?? '127.0.0.1',
  });
  print(`dashboard of ${outDir}: ${server.url} (Ctrl-C to stop)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}

/** A port number 0..65535, or undefined when not given. */
export function parsePort(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new UsageError(`${flag} expects a port number 0-65535, got "${text}"`);
  return port;
}

/**
 * Takes `--ui [port]` out of the crawl command's arguments (its port is optional, which parseArgs
 * cannot express: `--ui https://seed/` must leave the seed alone).
 */
export function takeUiFlag(argv: readonly string[]): { argv: string[]; uiPort: number | undefined } {
  const rest: string[] = [];
  let uiPort: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg === '--ui') {
      const next = argv[i + 1];
      if (next !== undefined && /^\d+$/.test(next)) {
        uiPort = parsePort(next, '--ui');
        i++;
      } else {
        uiPort = DEFAULT_UI_PORT;
      }
    } else if (arg.startsWith('--ui=')) {
      uiPort = parsePort(arg.slice(5), '--ui');
    } else {
      rest.push(arg);
    }
  }
  return { argv: rest, uiPort };
}

/** What a running crawl shows of itself: status.json always, the dashboard with `--ui`. */
export interface CrawlWatch {
  /** The dashboard's address, with `--ui`. */
  url: string | undefined;
  /**
   * Stops publishing and serving after a last update of status.json, which says `finalState`
   * (`done`, `failed`, `interrupted`) when given; safe to call twice.
   */
  close(finalState?: string): Promise<void>;
}

/**
 * Starts publishing a crawl's live state to status.json and, when `uiPort` is set, serves its
 * dashboard on 127.0.0.1. `live` reads the crawler (today `progress()`; its `snapshot()` once it
 * has one); before the crawl is open it may throw, and the files alone are shown.
 */
export async function watchCrawl(options: {
  outDir: string;
  seeds: readonly string[];
  live: () => Partial<DashboardSnapshot>;
  uiPort: number | undefined;
}): Promise<CrawlWatch> {
  const live = () => {
    try {
      return options.live();
    } catch {
      return undefined;
    }
  };
  const stopPublishing = publishStatus(options.outDir, options.seeds, () => live() ?? {});
  let server: DashboardServer | undefined;
  if (options.uiPort !== undefined) {
    const reader = new CrawlFolderReader(options.outDir);
    server = await startDashboard({
      port: options.uiPort,
      view: () => {
        const view = reader.read(live());
        if (view.seeds.length === 0) view.seeds = [...options.seeds];
        return view;
      },
    });
  }
  let closed = false;
  return {
    url: server?.url,
    close: async (finalState?: string) => {
      if (closed) return;
      closed = true;
      stopPublishing(finalState);
      await server?.close();
    },
  };
}

/** The crawl command's `--ui [PORT]` in its help (parsed by {@link takeUiFlag}, not parseArgs). */
export const UI_OPTION_ROW: [string, string] = [
  '--ui [PORT]',
  `serve a live dashboard on http://127.0.0.1:PORT/ (default ${DEFAULT_UI_PORT}) while the crawl runs`,
];
