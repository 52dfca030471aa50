import { UrlCanonicalizer } from '../../core/url/canonicalize.ts';
import { fingerprint } from '../../core/url/fingerprint.ts';
import { buildConfig, parseCommand, UsageError } from './cli-options.ts';

/**
 * `crawlstack canonicalize <url...>`: prints each URL's canonical form and 64-bit fingerprint,
 * tab-separated, so a user can see why two URLs count as one. Uses the same rules as a crawl
 * (`--config`, `--strip-param` apply). Exit 1 when any URL is rejected.
 */
export function canonicalizeCommand(argv: string[]): number {
  const parsed = parseCommand(argv);
  if (parsed.positionals.length === 0) throw new UsageError('canonicalize: give at least one URL');
  // The schema needs a seed; the URLs themselves are checked one by one below.
  const config = buildConfig(parsed, [], { seeds: ['http://example.invalid/'] });
  const canonicalizer = new UrlCanonicalizer(config);
  let failures = 0;
  for (const input of parsed.positionals) {
    const result = canonicalizer.canonicalize(input);
    if (result.ok) {
      console.log(`${result.url}\t${fingerprint(result.url)}`);
    } else {
      failures += 1;
      console.log(`${input}\terror: ${result.message}`);
    }
  }
  return failures === 0 ? 0 : 1;
}
