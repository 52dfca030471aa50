// Preloaded into every benchmarked process (`node --import`): at exit, writes the whole process's
// CPU time and peak RSS to $BENCH_USAGE_FILE, so crawlstack and Crawlee are measured the same way.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(
      file,
      JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssBytes: u.maxRSS * 1024 }),
    );
  });
}
