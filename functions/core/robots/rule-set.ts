/**
 * The Allow/Disallow rules of one group, arranged for the longest-match look-up of RFC 9309
 * §2.2.2. Small sets (nearly every robots.txt) are one array sorted by priority, where the first
 * match decides. Large ones (thousands of rules) also index their literal rules by text, so a URL
 * costs a hash look-up per distinct rule length instead of a comparison per rule.
 */
import { compilePattern, type PathPattern } from './pattern.ts';

/** One Allow or Disallow rule of the group that applies, for reports ("disallowed by line 12"). */
export interface RobotsRule {
  allow: boolean;
  /** Normalised pattern (see `normalizePattern`); its length is the rule's priority. */
  pattern: string;
  /** 1-based line in the body; 0 for the synthetic rule of a disallow-all entry. */
  line: number;
}

/** Above this many rules the literal ones are indexed. */
const INDEX_THRESHOLD = 48;

interface CompiledRule {
  readonly rule: RobotsRule;
  readonly matcher: PathPattern;
}

/** Literal rules of one text: an Allow and a Disallow may share it (then Allow wins the tie). */
interface SameText {
  allow?: RobotsRule;
  disallow?: RobotsRule;
}

/**
 * An immutable set of rules answering "which rule decides for this path?": the longest matching
 * pattern, Allow winning a tie. Duplicate rules are kept once (the first).
 */
export class RuleSet {
  /** Every rule, longest first and Allow first among equals (wildcards only, when indexed). */
  readonly #scan: readonly CompiledRule[];
  /** Prefix rules without `*` or `$`, by text, and their distinct lengths, longest first. */
  readonly #prefix: Map<string, SameText> | undefined;
  readonly #prefixLengths: readonly number[];
  /** `text$` rules without `*`, by `text`: they match one path exactly. */
  readonly #exact: Map<string, SameText> | undefined;

  constructor(rules: readonly RobotsRule[]) {
    const seen = new Set<string>();
    const unique = rules.filter((rule) => {
      const key = `${rule.allow ? 'A' : 'D'}${rule.pattern}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (unique.length <= INDEX_THRESHOLD) {
      this.#scan = sortByPriority(unique.map(compile));
      this.#prefix = this.#exact = undefined;
      this.#prefixLengths = [];
      return;
    }
    const prefix = new Map<string, SameText>();
    const exact = new Map<string, SameText>();
    const wild: CompiledRule[] = [];
    for (const rule of unique) {
      const p = rule.pattern;
      if (p.includes('*')) wild.push(compile(rule));
      else if (p.endsWith('$')) add(exact, p.slice(0, -1), rule);
      else add(prefix, p, rule);
    }
    this.#scan = sortByPriority(wild);
    this.#prefix = prefix;
    this.#exact = exact;
    this.#prefixLengths = [...new Set([...prefix.keys()].map((k) => k.length))].sort((a, b) => b - a);
  }

  /** The rule that decides for `path` (normalised, starting with `/`), or `undefined` if none matches. */
  decide(path: string): RobotsRule | undefined {
    let best: RobotsRule | undefined;
    for (const { rule, matcher } of this.#scan) {
      if (matcher.matches(path)) {
        best = rule;
        break;
      }
    }
    if (this.#prefix === undefined) return best;

    const exact = this.#exact!.get(path);
    if (exact !== undefined) best = better(best, exact);
    const floor = best === undefined ? 0 : best.pattern.length;
    for (const length of this.#prefixLengths) {
      if (length < floor) break;
      if (length > path.length) continue;
      const same = this.#prefix.get(length === path.length ? path : path.slice(0, length));
      if (same !== undefined) return better(best, same);
    }
    return best;
  }
}

function compile(rule: RobotsRule): CompiledRule {
  return { rule, matcher: compilePattern(rule.pattern) };
}

/** Longest pattern first, Allow before Disallow of the same length: then the first match decides. */
function sortByPriority(rules: CompiledRule[]): CompiledRule[] {
  return rules.sort(
    (a, b) => b.rule.pattern.length - a.rule.pattern.length || Number(b.rule.allow) - Number(a.rule.allow),
  );
}

function add(map: Map<string, SameText>, text: string, rule: RobotsRule): void {
  let same = map.get(text);
  if (same === undefined) {
    same = {};
    map.set(text, same);
  }
  if (rule.allow) same.allow ??= rule;
  else same.disallow ??= rule;
}

/** The winner between the best so far and a matching pair of same-text rules. */
function better(best: RobotsRule | undefined, same: SameText): RobotsRule | undefined {
  const candidate = same.allow ?? same.disallow!;
  if (best === undefined) return candidate;
  const a = best.pattern.length;
  const b = candidate.pattern.length;
  if (b > a || (b === a && candidate.allow && !best.allow)) return candidate;
  return best;
}
