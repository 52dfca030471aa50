// Bundles the CLI into one ES module so `crawlstack` starts in ~50 ms instead of
// compiling TypeScript on every run (startup CPU counts in the benchmark's ms/page).
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { build } from 'esbuild';

/**
 * zod's `locales` namespace pulls every language's error messages into the bundle (366 KB, about
 * a fifth of it, parsed at every start); the CLI speaks English, which zod registers by default.
 */
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

/**
 * The fetcher runs undici with `allowH2: false`, so HTTP/2 is never negotiated and undici's HTTP/2
 * client is never called; leaving it out keeps node:http2 and node:tls from loading at startup.
 */
const noHttp2 = {
  name: 'no-http2',
  setup(b) {
    b.onLoad({ filter: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h2\.js$/ }, () => ({
      contents:
        "module.exports = function connectH2() { throw new Error('HTTP/2 is not part of the crawlstack bundle'); };",
      loader: 'js',
    }));
  },
};

const quiet = process.argv.includes('--quiet');
const started = Date.now();
// Chunk names carry content hashes: clear old ones so dist/ holds exactly one build.
rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: { crawlstack: 'functions/local/cli.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  // Code only some crawls need (linkedom for CSS extraction) goes to chunks loaded on demand.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: 'linked',
  logLevel: quiet ? 'error' : 'warning',
  plugins: [englishOnlyZod, noHttp2],
  // Some bundled CommonJS packages call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});
if (!quiet) console.log(`built dist/crawlstack.mjs in ${Date.now() - started} ms`);
