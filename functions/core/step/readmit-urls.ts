/**
 * What a blocked duplicate-URL rule gives back (docs/duplicate-urls.md, "Merge logs"): the links it
 * had merged, admitted again through the path links take, and the queued tasks it had skipped,
 * queued again. Shared by the crawl step (a page, a redirect or a declaration that blocks a rule)
 * and the cloud's record step (a duplicate the content store names after the step).
 */
import type { RuleChange } from '../quality/duplicate-url-rules.ts';
import type { CashFlow } from '../scheduling/aopic.ts';
import type { CrawlTask } from '../types.ts';
import { fingerprint } from '../url/fingerprint.ts';
import {
  type Admission,
  admitUrls,
  type Followed,
  knownForm,
  type LinkRuleDeps,
  linkSkip,
} from './admit-urls.ts';
import type { AdmissionDeps } from './step-deps.ts';

/** What readmission needs of the crawl step's dependencies. */
export type ReadmitDeps = LinkRuleDeps & Pick<AdmissionDeps, 'canonicalizer' | 'seen'>;

/** A URL a blocked rule had merged, to crawl after all; `queued`: a queued task's (claimed). */
export interface Readmitted {
  url: string;
  queued: boolean;
}

/** The URLs the rules that a lesson blocked had merged: to be crawled after all (`readmitUrls`). */
export function readmitted(changes: readonly RuleChange[] | undefined): Readmitted[] {
  const out: Readmitted[] = [];
  for (const change of changes ?? []) {
    for (const url of change.readmit ?? []) out.push({ url, queued: false });
    for (const url of change.requeue ?? []) out.push({ url, queued: true });
  }
  return out;
}

/**
 * Crawls after all, as new links of `task`'s page, the URLs a rule merged before this page
 * blocked it: the same checks as links (canonical form, the rules still active, scope, held forms,
 * traps). A link it had merged was never claimed: it takes the URL-seen claim like any link (one
 * the crawl holds already is left alone). A queued task it had skipped was claimed when queued:
 * it is queued again directly, unless the rules still active merge it elsewhere. They carry no
 * cash (theirs went to the URL they were merged into). Returns them to queue: the claimed ones,
 * then the queued ones sent again.
 */
export async function readmitUrls(
  deps: ReadmitDeps,
  task: CrawlTask,
  urls: readonly Readmitted[],
): Promise<Followed> {
  const cashFlow: CashFlow = { cash: 0, toLambda: 0, credits: [] };
  const depth = task.depth + 1;
  const admissions: Admission[] = [];
  const requeued: CrawlTask[] = [];
  const seen = new Set<string>();
  for (const { url: linked, queued } of urls) {
    const canonical = deps.canonicalizer.canonicalize(linked);
    if (!canonical.ok) continue;
    const { url, linkedAs } = knownForm(deps.urlRules, canonical);
    if (seen.has(url)) continue;
    seen.add(url);
    if (linkSkip(deps, task, url, canonical.host, depth) !== undefined) continue;
    const fp = fingerprint(url);
    if (!queued || linkedAs !== undefined) admissions.push({ url, host: canonical.host, fp, cash: 0 });
    else {
      requeued.push({
        crawlId: task.crawlId,
        url,
        fp,
        host: canonical.host,
        depth,
        parent: task.fp,
        redirects: 0,
        attempt: 0,
        cash: 0,
        // its first message had this URL's deduplication id; the re-send names the page that sent it
        resentFrom: task.fp,
      });
    }
  }
  const { enqueued } = await admitUrls(deps, task, depth, admissions);
  return { enqueued: [...enqueued, ...requeued], cashFlow };
}
