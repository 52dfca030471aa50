/** Indexing directives of one page, from `<meta name=robots>` and `X-Robots-Tag`. */
export interface RobotsDirectives {
  noindex: boolean;
  nofollow: boolean;
}

/**
 * Adds the directives of one robots token list (`"noindex, nofollow"`, `"NONE"`, `"noindex
 * nofollow"`) to `into`. Tokens are case-insensitive and separated by commas or whitespace;
 * `none` means both; others (`all`, `noarchive`, `max-snippet:-1`) change nothing.
 */
export function addRobotsDirectives(content: string, into: RobotsDirectives): void {
  for (const token of content.toLowerCase().split(/[\s,]+/)) {
    if (token === 'noindex') into.noindex = true;
    else if (token === 'nofollow') into.nofollow = true;
    else if (token === 'none') {
      into.noindex = true;
      into.nofollow = true;
    }
  }
}
