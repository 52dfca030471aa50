// ASCII whitespace as the HTML spec defines it: tab, LF, FF, CR, space.
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

/**
 * URLs of a `srcset` candidate list, in order (HTML "parse a srcset attribute"): a URL is a run
 * of non-whitespace, so commas inside it are kept (`a.jpg?w=1,2 1x`) and only trailing commas end
 * it; descriptors (`1x`, `300w`, `(...)` with commas inside parentheses) are skipped. Candidates
 * with invalid descriptors are still returned: a crawler wants every URL the author wrote.
 */
export function parseSrcset(srcset: string): string[] {
  const urls: string[] = [];
  const n = srcset.length;
  let pos = 0;
  while (true) {
    // Skip whitespace and separating commas before a candidate.
    while (pos < n) {
      const c = srcset.charCodeAt(pos);
      if (c !== 0x2c && !isSpace(c)) break;
      pos++;
    }
    if (pos >= n) return urls;
    const start = pos;
    while (pos < n && !isSpace(srcset.charCodeAt(pos))) pos++;
    let end = pos;
    if (srcset.charCodeAt(end - 1) === 0x2c) {
      // "a.jpg," ends the candidate with no descriptors.
      while (end > start && srcset.charCodeAt(end - 1) === 0x2c) end--;
      if (end > start) urls.push(srcset.slice(start, end));
      continue;
    }
    urls.push(srcset.slice(start, end));
    // Descriptors run to the next comma outside parentheses.
    let inParens = false;
    while (pos < n) {
      const c = srcset.charCodeAt(pos);
      pos++;
      if (inParens) {
        if (c === 0x29) inParens = false;
      } else if (c === 0x28) inParens = true;
      else if (c === 0x2c) break;
    }
  }
}
