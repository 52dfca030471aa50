// Crawls one site with Crawlee's CheerioCrawler, in-memory storage, default settings, following
// same-domain links, and prints {"pages": N} on stdout. Run by bench/crawl-bench.ts with Crawlee
// installed in .bench-cache/crawlee (a benchmark-only install, not a project dependency).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [, , startUrl, crawleeDir] = process.argv;
const require = createRequire(`${crawleeDir}/package.json`);
const { CheerioCrawler, Configuration } = await import(pathToFileURL(require.resolve('crawlee')).href);

Configuration.getGlobalConfig().set('persistStorage', false);
Configuration.getGlobalConfig().set('logLevel', 'ERROR');
let pages = 0;
const crawler = new CheerioCrawler({
  maxRequestsPerCrawl: 1_000_000,
  async requestHandler({ enqueueLinks }) {
    pages += 1;
    await enqueueLinks({ strategy: 'same-domain' });
  },
});
await crawler.run([startUrl]);
console.log(JSON.stringify({ pages }));
