/**
 * Memory and cost of the duplicate-URL rule learner at its default budget: 200 hosts of 1,000
 * fetched pages each (URLs like a real site's, one page in 20 also fetched as `index.html`, one
 * in 25 with a `?ref=`), then `rewrite` on links of hosts with active rules and without.
 *
 *   node --expose-gc --import tsx test/unit/quality/measure-duplicate-url-rules.ts
 */
import { createHash } from 'node:crypto';
import { DuplicateUrlRules } from '../../../functions/core/quality/duplicate-url-rules.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const HOSTS = 200;
const PAGES = 1000;
const hashes = Array.from({ length: PAGES }, (_, i) => createHash('sha256').update(String(i)).digest('hex'));
const sections = ['articles', 'guides', 'topics', 'reviews', 'people', 'places', 'notes', 'projects'];

gc();
gc();
const before = process.memoryUsage().heapUsed;
const rules = new DuplicateUrlRules();
let observations = 0;
const started = performance.now();
for (let h = 0; h < HOSTS; h++) {
  const host = `www.site-${h}.example`;
  for (let i = 0; i < PAGES; i++) {
    const path = `/${sections[i % sections.length]}/river-light-morning-${i}/`;
    const contentHash = `${hashes[i]!.slice(0, 56)}${h.toString(16).padStart(8, '0')}`;
    rules.observePage({ url: `https://${host}${path}`, contentHash });
    observations++;
    if (i % 20 === 0) {
      rules.observePage({ url: `https://${host}${path}index.html`, contentHash });
      observations++;
    }
    if (i % 25 === 0) {
      rules.observePage({ url: `https://${host}${path}?ref=nav`, contentHash });
      observations++;
    }
  }
}
const observeMs = performance.now() - started;
gc();
gc();
const heap = process.memoryUsage().heapUsed - before;
const active = rules.report().filter((r) => r.status === 'active').length;
console.log(
  `${observations} observations over ${HOSTS} hosts: ${(observeMs / observations) * 1000 < 1000 ? ((observeMs / observations) * 1000).toFixed(1) : '?'} µs each; ` +
    `${rules.learningEntries} learning entries held (budget 50,000 + the current host), ${active} active rules`,
);
console.log(
  `heap +${(heap / 1024 / 1024).toFixed(1)} MiB: ${(heap / rules.learningEntries).toFixed(0)} B per entry`,
);

const links = 200_000;
const hostNames = Array.from({ length: HOSTS }, (_, h) => `www.site-${h}.example`);
const withRuleUrls = Array.from(
  { length: links },
  (_, i) => `https://${hostNames[i % HOSTS]}/notes/x-${i}/index.html`,
);
const otherHosts = Array.from({ length: 500 }, (_, h) => `other-${h}.example`);
const otherUrls = Array.from({ length: links }, (_, i) => `https://${otherHosts[i % 500]}/notes/x-${i}.html`);
let rewritten = 0;
let t = performance.now();
for (let i = 0; i < links; i++) {
  if (rules.rewrite(withRuleUrls[i]!)) rewritten++;
}
const withRules = ((performance.now() - t) / links) * 1000;
t = performance.now();
for (let i = 0; i < links; i++) rules.rewrite(otherUrls[i]!);
const without = ((performance.now() - t) / links) * 1000;
console.log(
  `rewrite: ${withRules.toFixed(2)} µs per link on hosts with rules (${rewritten} of ${links} rewritten, the rest audited), ` +
    `${without.toFixed(3)} µs on hosts without`,
);
// what the rewrites logged (each rule remembers what it merged, to give it back if blocked)
gc();
gc();
const logged = process.memoryUsage().heapUsed - before - heap;
console.log(
  `merge logs: ${rules.learningEntries} learning and log entries held after the rewrites, heap +${(logged / 1024 / 1024).toFixed(1)} MiB more`,
);

// a resumed crawl: the snapshot as JSON, restored (the memory's image indexes rebuilt)
const saved = JSON.stringify(rules.snapshot());
t = performance.now();
const restored = new DuplicateUrlRules({}, JSON.parse(saved));
const restoreMs = performance.now() - t;
console.log(
  `restore: ${(saved.length / 1024 / 1024).toFixed(1)} MiB of JSON restored in ${restoreMs.toFixed(0)} ms, ` +
    `${restored.learningEntries} learning and log entries held`,
);
