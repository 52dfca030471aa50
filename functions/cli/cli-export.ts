import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Writable } from 'node:stream';
import { csvRecord } from '../core/dataset/csv.ts';
import { escapeJsonText, safeJson } from '../core/text/safe-text.ts';
import { folderOptions, optionsHelp, parseFolderCommand, UsageError } from './cli-options.ts';
import { printError } from './terminal-text.ts';

const EXPORT_OPTIONS = folderOptions({
  format: { type: 'string', arg: 'F', help: 'jsonl (default) or csv' },
  source: {
    type: 'string',
    arg: 'S',
    help: 'dataset (dataset.jsonl: url + the extract fields; the default when the crawl has one) or pages (pages.jsonl: every URL attempted)',
  },
  fields: {
    type: 'string',
    arg: 'a,b',
    help: 'these columns (keys) only, in this order; missing values are empty, a name no record has is an error',
  },
  output: { type: 'string', arg: 'FILE', help: 'write here instead of standard output' },
  bom: { type: 'boolean', help: 'start a CSV file with a UTF-8 byte order mark (for Excel)' },
  'csv-raw-formulas': {
    type: 'boolean',
    help: "write CSV cells that begin with = + - @ or tab as they are (default: prefixed with ', so a spreadsheet does not run them)",
  },
});

export const EXPORT_HELP = `usage: crawlstack export --out DIR [--format jsonl|csv] [--source pages|dataset] [--fields a,b] [--output FILE] [--bom] [--csv-raw-formulas]

Writes a crawl's records as JSON Lines or CSV (RFC 4180: CRLF line ends, fields with commas,
quotes or line breaks quoted, quotes doubled; UTF-8; lists and objects as JSON in one cell).
Control and bidi characters from pages are escaped (JSON: \\uXXXX; CSV: \\xNN shown as text), and
CSV cells that begin like a formula get a ' in front (--csv-raw-formulas: not).

options:
${optionsHelp(EXPORT_OPTIONS)}`;

/** What `export` wrote. */
export interface ExportResult {
  source: string;
  rows: number;
  columns: string[];
  /** Bytes of an unfinished last line left out (a crawl writing right now). */
  partialBytes: number;
}

interface ExportOptions {
  /** The JSON Lines file to export (see {@link sourcePath}). */
  path: string;
  format: 'jsonl' | 'csv';
  fields?: string[] | undefined;
  bom?: boolean | undefined;
  /** CSV cells that begin like a formula as they are (no ' prefix). */
  rawFormulas?: boolean | undefined;
}

/** `crawlstack export --out DIR ...` */
export async function exportCommand(argv: string[]): Promise<number> {
  const command = parseFolderCommand(argv, 'export', EXPORT_OPTIONS, EXPORT_HELP);
  if (command === undefined) return 0;
  const { out, values } = command;
  const format = (values.format ?? 'jsonl') as string;
  if (format !== 'jsonl' && format !== 'csv')
    throw new UsageError(`--format is jsonl or csv, got "${format}"`);
  const source = values.source as string | undefined;
  if (source !== undefined && source !== 'pages' && source !== 'dataset')
    throw new UsageError(`--source is pages or dataset, got "${source}"`);
  if (values.bom && format !== 'csv') throw new UsageError('--bom is for --format csv only');
  if (values['csv-raw-formulas'] && format !== 'csv')
    throw new UsageError('--csv-raw-formulas is for --format csv only');
  let fields: string[] | undefined;
  if (typeof values.fields === 'string') {
    fields = values.fields.split(',').map((f) => f.trim());
    if (fields.some((f) => f === '')) throw new UsageError(`--fields has an empty name: "${values.fields}"`);
  }
  const path = sourcePath(out, source);
  const file = typeof values.output === 'string' ? values.output : undefined;
  let output: Writable = process.stdout;
  // Opened once the columns are known: a failed --fields check leaves no file behind.
  const open = () => {
    if (file !== undefined) output = createWriteStream(file);
    return output;
  };
  const result = await exportCrawl(open, {
    path,
    format,
    fields,
    bom: values.bom === true,
    rawFormulas: values['csv-raw-formulas'] === true,
  });
  if (output !== process.stdout) {
    output.end();
    await once(output, 'close');
  }
  const note =
    result.partialBytes > 0 ? ` (an unfinished last line of ${result.partialBytes} bytes left out)` : '';
  printError(`exported ${result.rows} rows from ${result.source}${note}`);
  return 0;
}

/**
 * The file to export: `source`.jsonl of the crawl, by default dataset.jsonl when the crawl has
 * one and pages.jsonl otherwise.
 * @throws UsageError when it does not exist.
 */
export function sourcePath(outDir: string, source: 'pages' | 'dataset' | undefined): string {
  const chosen = source ?? (existsSync(join(outDir, 'dataset.jsonl')) ? 'dataset' : 'pages');
  const path = join(outDir, `${chosen}.jsonl`);
  if (!existsSync(path)) {
    throw new UsageError(
      chosen === 'dataset'
        ? `export: ${outDir} has no dataset.jsonl (crawl with --extract or --extract-config to make one)`
        : `export: ${outDir} has no pages.jsonl; give the --out of a crawl`,
    );
  }
  return path;
}

/**
 * Writes a crawl's pages.jsonl or dataset.jsonl (`path`) to `out` as JSON Lines or CSV, its text
 * under the policy of core/text/safe-text.ts. Streams the file twice for CSV or `fields`: once to
 * find the columns, in order of first appearance.
 * @throws UsageError when a field of `fields` is in no record (a typo would be an empty column).
 */
export async function exportCrawl(
  target: Writable | (() => Writable),
  options: ExportOptions,
): Promise<ExportResult> {
  const { path } = options;
  let columns = options.fields;
  if (columns !== undefined || options.format === 'csv') {
    const seen = new Set<string>();
    let rows = 0;
    for await (const { row } of new JsonlRows(path)) {
      rows++;
      for (const key of Object.keys(row)) seen.add(key);
    }
    const missing = (columns ?? []).filter((c) => !seen.has(c));
    if (rows > 0 && missing.length > 0) {
      throw new UsageError(
        `--fields: no record of ${basename(path)} has ${missing.map((m) => `"${m}"`).join(', ')} ` +
          `(its fields: ${[...seen].join(', ')})`,
      );
    }
    columns ??= [...seen];
  }
  const out = typeof target === 'function' ? target() : target;
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const policy = { rawFormulas: options.rawFormulas === true };
  if (options.format === 'csv') {
    if (options.bom) await write('\uFEFF');
    await write(csvRecord(columns ?? [], policy));
  }
  let rows = 0;
  const reader = new JsonlRows(path);
  for await (const { row, line } of reader) {
    rows++;
    if (options.format === 'csv')
      await write(
        csvRecord(
          (columns ?? []).map((c) => row[c]),
          policy,
        ),
      );
    else if (columns === undefined) await write(`${escapeJsonText(line)}\n`);
    else await write(`${safeJson(Object.fromEntries(columns.map((c) => [c, row[c] ?? null])))}\n`);
  }
  return { source: basename(path), rows, columns: columns ?? [], partialBytes: reader.partialBytes };
}

/**
 * The complete lines of a JSON Lines file, parsed. A last line without its newline is being
 * written by a running crawl (or was cut by a crash and is cut back on resume): it is left out,
 * and `partialBytes` says how long it was.
 */
class JsonlRows {
  readonly path: string;
  partialBytes = 0;

  constructor(path: string) {
    this.path = path;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<{ row: Record<string, unknown>; line: string }> {
    let rest = '';
    let lineNumber = 0;
    for await (const chunk of createReadStream(this.path, { encoding: 'utf8' })) {
      const lines = (rest + (chunk as string)).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        lineNumber++;
        if (line === '') continue;
        let row: unknown;
        try {
          row = JSON.parse(line);
        } catch {
          throw new UsageError(`${this.path} line ${lineNumber} is not JSON: ${line.slice(0, 80)}`);
        }
        if (row === null || typeof row !== 'object' || Array.isArray(row))
          throw new UsageError(`${this.path} line ${lineNumber} is not a JSON object`);
        yield { row: row as Record<string, unknown>, line };
      }
    }
    this.partialBytes = Buffer.byteLength(rest);
  }
}
