// Bundles the CLI into one ES module so `crawlstack` starts in ~50 ms instead of
// compiling TypeScript on every run (startup CPU counts in the benchmark's ms/page).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

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
  // Some bundled CommonJS packages call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
});
if (!quiet) console.log(`built dist/crawlstack.mjs in ${Date.now() - started} ms`);
