/**
 * Measures how far apart a site's error pages (quoting different paths) and its real pages are
 * from the soft-404 probe's answer, with and without dropping the quoted path, on the frames of
 * the Debian python3-doc and postgresql-doc pages. The numbers in docs/quality.md come from here.
 * Not a test: `npx tsx test/unit/quality/measure-soft-404.ts`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extractPage } from '../../../functions/core/html/extract.ts';
import { hammingDistance, simhash } from '../../../functions/core/quality/simhash.ts';
import { Soft404Detector } from '../../../functions/core/quality/soft-404.ts';

const SITES: [dir: string, base: string][] = [
  ['/usr/share/doc/python3-doc/html/library/', 'https://docs.python.org/3/library/'],
  ['/usr/share/doc/postgresql-doc-15/html/', 'https://www.postgresql.org/docs/15/'],
];

const quantiles = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.floor(q * (s.length - 1))];
  return `min ${s[0]} p10 ${at(0.1)} median ${at(0.5)} p90 ${at(0.9)} max ${s.at(-1)}`;
};

for (const [dir, base] of SITES) {
  if (!existsSync(dir)) continue;
  const files = readdirSync(dir).filter((f) => f.endsWith('.html'));
  const texts = files.map(
    (f) => extractPage(readFileSync(dir + f, 'utf8'), base + f, { text: true }).text ?? '',
  );
  // the site's frame: lines on more than half of the pages, split into header and footer
  const counts = new Map<string, number>();
  for (const t of texts)
    for (const line of new Set(t.split('\n'))) counts.set(line, (counts.get(line) ?? 0) + 1);
  const frame = texts[0]!.split('\n').filter((line) => (counts.get(line) ?? 0) > texts.length / 2);
  const head = frame.slice(0, Math.ceil(frame.length / 2)).join('\n');
  const foot = frame.slice(Math.ceil(frame.length / 2)).join('\n');
  const error = (path: string) =>
    `${head}\nPage not found\nSorry, the page ${path} could not be found. It may have been moved or deleted.\n${foot}`;

  const origin = new URL(base).origin;
  const probePath = '/crawlstack-probe-k3j9x0q2m7ab.html';
  const detector = new Soft404Detector();
  detector.recordProbe(origin + probePath, { status: 200, text: error(probePath) });
  const probePlain = simhash(error(probePath));
  const probeDropped = simhash(error(probePath), { skip: [probePath] });

  const plain: number[] = [];
  const dropped: number[] = [];
  let errorsFound = 0;
  const paths = files.map((f) => new URL(base + f).pathname);
  for (const path of paths) {
    plain.push(hammingDistance(probePlain, simhash(error(path))));
    dropped.push(hammingDistance(probeDropped, simhash(error(path), { skip: [path] })));
    if (detector.isSoft404(origin + path, { status: 200, text: error(path) })) errorsFound++;
  }
  const real: number[] = [];
  let realFlagged = 0;
  texts.forEach((text, i) => {
    real.push(hammingDistance(probeDropped, simhash(text, { skip: [paths[i]!] })));
    if (detector.isSoft404(origin + paths[i], { status: 200, text })) realFlagged++;
  });
  console.log(`${dir} (frame of ${`${head} ${foot}`.split(/\s+/).length} words, ${files.length} pages)`);
  console.log(`  error page vs probe, path kept:    ${quantiles(plain)}`);
  console.log(`  error page vs probe, path dropped: ${quantiles(dropped)}`);
  console.log(`  real page vs probe, path dropped:  ${quantiles(real)}`);
  console.log(
    `  Soft404Detector (maxDistance 6): ${errorsFound}/${paths.length} error pages found, ${realFlagged}/${texts.length} real pages flagged`,
  );
}
