// Bundles the CLI into one ES module so `crawlstack` starts in ~50 ms instead of
// compiling TypeScript on every run (startup CPU counts in the benchmark's ms/page).
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/**
 * Link extraction uses only htmlparser2's Tokenizer; importing the package index made the chunk it
 * shares with linkedom (CSS extraction, loaded on demand) also run the Parser, domhandler, domutils
 * and dom-serializer modules at every start.
 */
const tokenizerOnly = {
  name: 'htmlparser2-tokenizer-only',
  setup(b) {
    b.onResolve({ filter: /^htmlparser2$/ }, (args) =>
      /[\\/]functions[\\/]core[\\/]html[\\/]extract\.ts$/.test(args.importer)
        ? { path: 'tokenizer', namespace: 'htmlparser2-tokenizer' }
        : undefined,
    );
    // The file itself: the package's exports map does not list it.
    const file = join(dirname(fileURLToPath(import.meta.resolve('htmlparser2'))), 'Tokenizer.js');
    b.onLoad({ filter: /.*/, namespace: 'htmlparser2-tokenizer' }, () => ({
      contents: `export { default as Tokenizer } from ${JSON.stringify(file)};`,
      resolveDir: dirname(file),
      loader: 'js',
    }));
  },
};

const quiet = process.argv.includes('--quiet');
const started = Date.now();
// Chunk names carry content hashes: clear old ones so dist/ holds exactly one build.
rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: { crawlstack: 'functions/cli/cli.ts' },
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
  plugins: [englishOnlyZod, noHttp2, tokenizerOnly],
  // Without comments the bundle is pure ASCII, which Node reads and V8 parses as one-byte text (a
  // few comments with '§' or '—' made all of it two-byte): ~15 ms less CPU at every start. Stack
  // traces keep their function names; node --enable-source-maps maps lines back.
  minifyWhitespace: true,
  legalComments: 'external',
  // Some bundled CommonJS packages call require(); give the ESM bundle one. And before any
  // bundled code runs: no allocation-site pretenuring. In about half of the runs V8 tenured an
  // allocation site during startup, whose later per-page objects then went straight to the old
  // generation and kept each page's HTML alive there (34 MB promoted instead of 9 MB on the
  // PostgreSQL docs, twice the scavenge time, 131 MB peak RSS instead of 105 MB).
  banner: {
    js: [
      "import { createRequire as __createRequire } from 'node:module';",
      "import { setFlagsFromString as __setV8Flags } from 'node:v8';",
      'const require = __createRequire(import.meta.url);',
      "__setV8Flags('--no-allocation-site-pretenuring');",
    ].join(' '),
  },
});
if (!quiet) console.log(`built dist/crawlstack.mjs in ${Date.now() - started} ms`);
