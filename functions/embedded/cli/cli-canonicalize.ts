import { UrlCanonicalizer } from '../../core/url/canonicalize.ts';
import { fingerprint } from '../../core/url/fingerprint.ts';
import {
  buildConfig,
  configFlagRows,
  formatRows,
  HELP_OPTION,
  optionRows,
  parseCommand,
  UsageError,
} from './cli-options.ts';
import { print } from './terminal-text.ts';

export const CANONICALIZE_HELP = `usage: crawlstack canonicalize <url...> [options]

Prints each URL's canonical form and its 64-bit fingerprint, tab-separated, with the rules of a
crawl (--config and --strip-param apply). Exit 1 when any URL is rejected.

options:
${formatRows([
  ...optionRows({ help: HELP_OPTION }),
  ...configFlagRows().filter(([flag]) => /^--(config|strip-param) /.test(flag)),
])}`;

/**
 * `crawlstack canonicalize <url...>`: prints each URL's canonical form and 64-bit fingerprint,
 * tab-separated, so a user can see why two URLs count as one. Uses the same rules as a crawl
 * (`--config`, `--strip-param` apply). Exit 1 when any URL is rejected.
 */
export function canonicalizeCommand(argv: string[]): number {
  const parsed = parseCommand(argv);
  if (parsed.values.help) {
    print(CANONICALIZE_HELP);
    return 0;
  }
  if (parsed.positionals.length === 0) throw new UsageError('give at least one URL');
  // The schema needs a seed; the URLs themselves are checked one by one below.
  const config = buildConfig(parsed, [], { seeds: ['http://example.invalid/'] });
  const canonicalizer = new UrlCanonicalizer(config);
  let failures = 0;
  for (const input of parsed.positionals) {
    const result = canonicalizer.canonicalize(input);
    if (result.ok) {
      print(`${result.url}\t${fingerprint(result.url)}`);
    } else {
      failures += 1;
      print(`${input}\terror: ${result.message}`);
    }
  }
  return failures === 0 ? 0 : 1;
}
