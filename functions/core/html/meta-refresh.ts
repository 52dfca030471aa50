function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

/**
 * Target of a `<meta http-equiv="refresh" content="...">` (HTML "shared declarative refresh
 * steps"): `5; url=next.html`, `0;URL='next.html'`, `5, next.html`, `3 url = "a b"`. Returns the
 * raw URL text (whitespace-trimmed, quotes removed), or null when the content has no URL (a plain
 * reload) or is malformed.
 */
export function parseMetaRefresh(content: string): string | null {
  const n = content.length;
  let pos = 0;
  while (pos < n && isSpace(content.charCodeAt(pos))) pos++;
  const timeStart = pos;
  while (pos < n && isDigit(content.charCodeAt(pos))) pos++;
  if (pos === timeStart && content.charCodeAt(pos) !== 0x2e /* . */) return null;
  while (pos < n && (isDigit(content.charCodeAt(pos)) || content.charCodeAt(pos) === 0x2e)) pos++;
  if (pos >= n) return null;
  let c = content.charCodeAt(pos);
  if (c !== 0x3b /* ; */ && c !== 0x2c /* , */ && !isSpace(c)) return null;
  while (pos < n && isSpace(content.charCodeAt(pos))) pos++;
  c = content.charCodeAt(pos);
  if (c === 0x3b || c === 0x2c) pos++;
  while (pos < n && isSpace(content.charCodeAt(pos))) pos++;
  if (pos >= n) return null;

  let urlStart = pos;
  // Optional "url =" prefix; without it the rest of the content is the URL.
  if ((content.charCodeAt(pos) | 0x20) === 0x75 /* u */) {
    let p = pos + 1;
    if (
      (content.charCodeAt(p) | 0x20) === 0x72 /* r */ &&
      (content.charCodeAt(p + 1) | 0x20) === 0x6c /* l */
    ) {
      p += 2;
      while (p < n && isSpace(content.charCodeAt(p))) p++;
      if (content.charCodeAt(p) === 0x3d /* = */) {
        p++;
        while (p < n && isSpace(content.charCodeAt(p))) p++;
        urlStart = p;
      }
    }
  }
  let urlEnd = n;
  const quote = content.charCodeAt(urlStart);
  if (quote === 0x22 || quote === 0x27) {
    urlStart++;
    const close = content.indexOf(quote === 0x22 ? '"' : "'", urlStart);
    if (close !== -1) urlEnd = close;
  }
  while (urlStart < urlEnd && isSpace(content.charCodeAt(urlStart))) urlStart++;
  while (urlEnd > urlStart && isSpace(content.charCodeAt(urlEnd - 1))) urlEnd--;
  return urlEnd > urlStart ? content.slice(urlStart, urlEnd) : null;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
