import { addRobotsDirectives, type RobotsDirectives } from './robots-directives.ts';

// Directives written "name: value"; anything else before a colon is a user agent.
const VALUED_DIRECTIVES = new Set([
  'unavailable_after',
  'max-snippet',
  'max-image-preview',
  'max-video-preview',
]);

/**
 * Parses X-Robots-Tag header values: `noindex`, `nofollow`, `none`, comma lists, and
 * agent-specific values such as `crawlstack: noindex, nofollow` (the agent prefix applies to the
 * directives after it in the same header value, until another agent prefix). Agent-specific values
 * apply only to `agent` (case-insensitive). `unavailable_after` and other valued directives are
 * ignored.
 */
export function parseXRobotsTag(values: readonly string[], agent: string): RobotsDirectives {
  const result: RobotsDirectives = { noindex: false, nofollow: false };
  const me = agent.trim().toLowerCase();
  for (const value of values) {
    // null: the directives apply to every agent.
    let target: string | null = null;
    for (const rawPart of value.split(',')) {
      let part = rawPart.trim();
      const colon = part.indexOf(':');
      if (colon !== -1) {
        const name = part.slice(0, colon).trim().toLowerCase();
        if (VALUED_DIRECTIVES.has(name)) continue;
        if (/^[a-z0-9_.-]+$/.test(name)) {
          target = name;
          part = part.slice(colon + 1);
          const inner = part.indexOf(':');
          // "crawlstack: unavailable_after: ..." names the agent, then a valued directive.
          if (inner !== -1 && VALUED_DIRECTIVES.has(part.slice(0, inner).trim().toLowerCase())) continue;
        } else {
          // An RFC 850 date's tail ("Monday, 25-Jun-2010 15:00:00 PST") lands here: not a directive.
          continue;
        }
      }
      if (target === null || target === me) addRobotsDirectives(part, result);
    }
  }
  return result;
}
