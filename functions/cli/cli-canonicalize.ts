import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuplicateUrlRuleError, ruleKey } from '../core/quality/duplicate-url-rule.ts';
import type { UrlRuleBook } from '../core/quality/duplicate-url-rule-book.ts';
import { DuplicateUrlRules, type RuleRecord } from '../core/quality/duplicate-url-rules.ts';
import { type CanonicalResult, UrlCanonicalizer } from '../core/url/canonicalize.ts';
import { fingerprint } from '../core/url/fingerprint.ts';
import { RULES_FILE } from '../embedded/crawl-state.ts';
import { buildConfig, commandOptions, optionsHelp, parseConfigCommand, UsageError } from './cli-options.ts';
import { print } from './terminal-text.ts';

const OPTIONS = commandOptions({
  rules: {
    type: 'string',
    arg: 'DIR',
    help: "a crawl's folder: also apply the duplicate-URL rules it learned (its rules.json)",
  },
});

export const CANONICALIZE_HELP = `usage: crawlstack canonicalize <url...> [options]

Prints each URL's canonical form and its 64-bit fingerprint, tab-separated, with the rules of a
crawl (--config and --strip-param apply). Exit 1 when any URL is rejected.

With --rules DIR, each line also gives the URL the crawl's duplicate-URL rules rewrite it into,
with its fingerprint and the rules that did (docs/duplicate-urls.md); given two URLs, a last line
says whether the crawl took them for one page, and by which rules.

options:
${optionsHelp(OPTIONS, { configFlags: ['config', 'strip-param'] })}`;

/**
 * `crawlstack canonicalize <url...>`: prints each URL's canonical form and 64-bit fingerprint,
 * tab-separated, so a user can see why two URLs count as one. Uses the same rules as a crawl
 * (`--config`, `--strip-param` apply); `--rules DIR` adds the duplicate-URL rules a crawl
 * learned. Exit 1 when any URL is rejected.
 */
export function canonicalizeCommand(argv: string[]): number {
  const parsed = parseConfigCommand(argv, OPTIONS, CANONICALIZE_HELP);
  if (parsed === undefined) return 0;
  if (parsed.positionals.length === 0) throw new UsageError('give at least one URL');
  // The schema needs a seed; the URLs themselves are checked one by one below.
  const config = buildConfig(parsed, [], { seeds: ['http://example.invalid/'] });
  const canonicalizer = new UrlCanonicalizer(config);
  const dir = parsed.values.rules;
  const rules = typeof dir === 'string' ? loadRules(dir) : undefined;
  const results: CanonicalResult[] = [];
  let failures = 0;
  for (const input of parsed.positionals) {
    const result = canonicalizer.canonicalize(input);
    results.push(result);
    if (!result.ok) {
      failures += 1;
      print(`${input}\terror: ${result.message}`);
    } else if (rules === undefined) {
      print(`${result.url}\t${fingerprint(result.url)}`);
    } else {
      const { url, rules: applied } = rules.explain(result.url, result.url).a;
      const names = applied.map(ruleKey);
      const alias = rules.aliasNamespace(url);
      if (alias !== undefined) names.push(`${ruleKey(alias)} (not fetched)`);
      const named = names.length === 0 ? '-' : names.join(', ');
      print(`${result.url}\t${fingerprint(result.url)}\t${url}\t${fingerprint(url)}\t${named}`);
    }
  }
  const [a, b] = results;
  if (rules !== undefined && results.length === 2 && a?.ok && b?.ok) print(verdict(rules, a, b));
  return failures === 0 ? 0 : 1;
}

/** Whether the crawl took two canonical URLs for one page, and why. */
function verdict(
  rules: UrlRuleBook,
  a: Extract<CanonicalResult, { ok: true }>,
  b: Extract<CanonicalResult, { ok: true }>,
): string {
  if (a.url === b.url) return `same page: both canonicalize to ${a.url}`;
  const origin = new URL(a.url).origin;
  if (origin !== new URL(b.url).origin) return 'different pages: rules apply within one origin';
  const why = rules.explain(a.url, b.url);
  const used = [...why.a.rules, ...why.b.rules].map(ruleKey);
  if (why.merged) return `same page: both become ${why.a.url}, by ${[...new Set(used)].join(', ')}`;
  for (const url of [why.a.url, why.b.url]) {
    const alias = rules.aliasNamespace(url);
    if (alias !== undefined)
      return `not fetched: ${url} is an alias by ${ruleKey(alias)} (its page declares which URL it is)`;
  }
  const active = rules.activeRules(origin).map(ruleKey);
  return active.length === 0
    ? `different pages: the crawl learned no rule for ${origin}`
    : `different pages: ${origin}'s rules (${active.join(', ')}) do not merge them`;
}

/** The rules a crawl wrote to DIR/rules.json (when it ended), as a learner that applies them. */
function loadRules(dir: string): UrlRuleBook {
  const path = join(dir, RULES_FILE);
  if (!existsSync(path)) {
    throw new UsageError(
      `--rules ${dir}: no ${RULES_FILE} there (a crawl writes it when it ends, with duplicateUrlRules on)`,
    );
  }
  let records: RuleRecord[];
  try {
    records = JSON.parse(readFileSync(path, 'utf8')) as RuleRecord[];
    if (!Array.isArray(records)) throw new Error('not a JSON array');
  } catch (error) {
    throw new UsageError(`--rules ${dir}: ${RULES_FILE} is not readable: ${(error as Error).message}`);
  }
  const origins = new Map<string, Omit<RuleRecord, 'origin'>[]>();
  for (const { origin, ...record } of records) {
    if (typeof origin !== 'string')
      throw new UsageError(
        `--rules ${dir}: a rule without an origin in ${RULES_FILE} (a crawl from before rules were kept per origin wrote "host": crawl again)`,
      );
    let list = origins.get(origin);
    if (list === undefined) {
      list = [];
      origins.set(origin, list);
    }
    list.push(record);
  }
  try {
    // No audit: the answer is what the rules say of every URL.
    const snapshot = { origins: [...origins].map(([origin, rules]) => ({ origin, rules })) };
    return new DuplicateUrlRules({ auditShare: 0, auditFirst: 0 }, snapshot);
  } catch (error) {
    if (!(error instanceof DuplicateUrlRuleError)) throw error;
    throw new UsageError(`--rules ${dir}: ${error.message}`);
  }
}
