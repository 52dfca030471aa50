import type { LinkKind } from '../types.ts';

// Extensions that override the element's default kind. Lowercase, without the dot.
const IMAGE_EXTENSIONS = [
  'png',
  'jpg',
  'jpeg',
  'jfif',
  'gif',
  'webp',
  'svg',
  'avif',
  'ico',
  'bmp',
  'tif',
  'tiff',
];
const DOCUMENT_EXTENSIONS = [
  'pdf',
  'doc',
  'docx',
  'xls',
  'xlsx',
  'ppt',
  'pptx',
  'odt',
  'ods',
  'odp',
  'rtf',
  'txt',
  'csv',
  'tsv',
  'epub',
];
const OTHER_EXTENSIONS = [
  // archives, installers, disk images
  'zip',
  'gz',
  'tgz',
  'bz2',
  'xz',
  'zst',
  'tar',
  '7z',
  'rar',
  'exe',
  'msi',
  'dmg',
  'iso',
  'deb',
  'rpm',
  'apk',
  'jar',
  'bin',
  // audio and video
  'mp3',
  'mp4',
  'm4a',
  'm4v',
  'avi',
  'mov',
  'mkv',
  'webm',
  'ogg',
  'ogv',
  'oga',
  'wav',
  'flac',
  'aac',
  'wmv',
  'flv',
  'mpg',
  'mpeg',
  // web assets and data
  'css',
  'js',
  'mjs',
  'json',
  'xml',
  'rss',
  'atom',
  'woff',
  'woff2',
  'ttf',
  'otf',
  'eot',
  'wasm',
  'map',
  'swf',
];

const EXTENSION_KIND = new Map<string, LinkKind>();
for (const ext of IMAGE_EXTENSIONS) EXTENSION_KIND.set(ext, 'image');
for (const ext of DOCUMENT_EXTENSIONS) EXTENSION_KIND.set(ext, 'document');
for (const ext of OTHER_EXTENSIONS) EXTENSION_KIND.set(ext, 'other');

// The longest extension in the tables; anything longer cannot match, so it is not lowercased.
const MAX_EXTENSION = 5;

// `<link rel>` tokens. Navigational relations point at documents a reader could open; resource
// relations (stylesheet, preload, manifest, ...) and unknown ones do not, so they default to other.
const IMAGE_RELS = new Set([
  'icon',
  'apple-touch-icon',
  'apple-touch-icon-precomposed',
  'mask-icon',
  'image_src',
]);
const PAGE_RELS = new Set([
  'alternate',
  'canonical',
  'next',
  'prev',
  'previous',
  'first',
  'last',
  'up',
  'index',
  'contents',
  'toc',
  'home',
  'start',
  'top',
  'help',
  'search',
  'glossary',
  'chapter',
  'section',
  'subsection',
  'appendix',
  'copyright',
  'license',
  'author',
  'bookmark',
  'archives',
  'amphtml',
]);

/**
 * Lowercase extension of the last path segment of `href` (a raw, unresolved URL), or null.
 * Query, fragment and `;params` are ignored; a host name is never taken for an extension
 * (`https://example.com` has none).
 */
export function linkExtension(href: string): string | null {
  let end = href.length;
  for (let i = 0; i < end; i++) {
    const c = href.charCodeAt(i);
    if (c === 0x3f /* ? */ || c === 0x23 /* # */) {
      end = i;
      break;
    }
  }
  // Skip "scheme://authority" or "//authority": the path starts at the next slash.
  let pathStart = 0;
  const authority = href.indexOf('//');
  if (authority !== -1 && authority < end && isSchemeOrEmpty(href, authority)) {
    pathStart = href.indexOf('/', authority + 2);
    if (pathStart === -1 || pathStart >= end) return null;
  }
  let dot = -1;
  for (let i = end - 1; i >= pathStart; i--) {
    const c = href.charCodeAt(i);
    if (c === 0x2f /* / */) break;
    if (c === 0x3b /* ; */) {
      end = i;
      dot = -1;
    } else if (c === 0x2e /* . */ && dot === -1) dot = i;
  }
  if (dot === -1 || end - dot - 1 === 0 || end - dot - 1 > MAX_EXTENSION) return null;
  return href.slice(dot + 1, end).toLowerCase();
}

// True when href[0..slashes) is empty ("//host") or a scheme followed by ':' ("https:").
function isSchemeOrEmpty(href: string, slashes: number): boolean {
  if (slashes === 0) return true;
  if (href.charCodeAt(slashes - 1) !== 0x3a /* : */) return false;
  for (let i = 0; i < slashes - 1; i++) {
    const c = href.charCodeAt(i) | 0x20;
    const alpha = c >= 0x61 && c <= 0x7a;
    if (!alpha && (i === 0 || !isSchemeChar(href.charCodeAt(i)))) return false;
  }
  return slashes > 1;
}

function isSchemeChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2b ||
    c === 0x2d ||
    c === 0x2e ||
    ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a)
  );
}

function relKind(rel: string): LinkKind | null {
  let page = false;
  let other = false;
  for (const token of rel.toLowerCase().split(/[\t\n\f\r ]+/)) {
    if (token === '') continue;
    if (IMAGE_RELS.has(token)) return 'image';
    if (token === 'stylesheet') other = true;
    else if (PAGE_RELS.has(token)) page = true;
  }
  // "alternate stylesheet" is a stylesheet; unknown relations (preload, manifest, pingback) are not pages.
  if (other) return 'other';
  return page ? 'page' : null;
}

/**
 * Kind of a link target from the element (and `rel` for `<link>`) and the path's extension:
 * `img` is always an image; `source` an image unless its extension says audio/video (the
 * extractor passes `source` inside `<video>`/`<audio>` as other itself); `script` other;
 * `link` by rel (icon -> image, stylesheet -> other, navigational rels such as
 * alternate/next/prev/canonical -> page, unknown rels -> other) with the extension overriding
 * page; `a`, `area`, `iframe`, `frame`, `meta-refresh` and anything else -> page unless the
 * extension says image, document or other. `embed`, `object`, `video`, `audio`, `track` default
 * to other.
 */
export function classifyLink(tag: string, href: string, rel?: string): LinkKind {
  switch (tag) {
    case 'img':
      return 'image';
    case 'script':
      return 'other';
    case 'source': {
      const byExt = extensionKind(href);
      return byExt === 'other' || byExt === 'document' ? byExt : 'image';
    }
    case 'link': {
      const byRel = rel === undefined ? null : relKind(rel);
      if (byRel === 'image' || byRel === 'other') return byRel;
      const byExt = extensionKind(href);
      if (byExt !== null) return byExt;
      return byRel ?? 'other';
    }
    case 'embed':
    case 'object':
    case 'video':
    case 'audio':
    case 'track':
      return extensionKind(href) ?? 'other';
    default:
      return extensionKind(href) ?? 'page';
  }
}

function extensionKind(href: string): LinkKind | null {
  const ext = linkExtension(href);
  return ext === null ? null : (EXTENSION_KIND.get(ext) ?? null);
}
