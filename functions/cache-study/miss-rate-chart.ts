import type { CachePolicy } from './cache-policies.ts';
import type { CacheStudy } from './cache-study.ts';

/** Settings of {@link missRateChartSvg}. */
export interface MissRateChartOptions {
  /** Names the crawl in the subtitle ("PostgreSQL docs"). */
  label?: string;
  /** A cache size to mark with a vertical line (the crawl's own `seenCacheSize`). */
  markSize?: number;
}

// Okabe-Ito colours (told apart with colour-blindness), and a dash and a marker per policy, so
// the curves that overlap (LRU, CLOCK, RANDOM often do) and a grey print stay readable.
const STYLE: Record<
  CachePolicy,
  { color: string; dash: string; marker: 'circle' | 'square' | 'triangle' | 'diamond' | 'cross' }
> = {
  LRU: { color: '#0072B2', dash: '', marker: 'circle' },
  CLOCK: { color: '#D55E00', dash: '7 3', marker: 'square' },
  RANDOM: { color: '#009E73', dash: '2 3', marker: 'triangle' },
  STATIC: { color: '#CC79A7', dash: '10 3 2 3', marker: 'diamond' },
  MIN: { color: '#000000', dash: '', marker: 'cross' },
};

const WIDTH = 820;
const HEIGHT = 480;
const LEFT = 72;
const RIGHT = 600;
const TOP = 70;
const BOTTOM = 410;

/**
 * The study as a line chart in SVG: miss rate (linear, %) against cache size (log scale), one
 * line per policy, the infinite cache's miss rate as a grey floor. Plain SVG 1.1, no script, no
 * external resources: it opens in a browser and embeds in Markdown.
 */
export function missRateChartSvg(study: CacheStudy, options: MissRateChartOptions = {}): string {
  const rows = study.rows;
  const minLog2 = Math.log2(rows[0]?.size ?? 1);
  const maxLog2 = Math.log2(rows.at(-1)?.size ?? 2);
  const span = Math.max(1, maxLog2 - minLog2);
  const x = (size: number) => LEFT + ((Math.log2(size) - minLog2) / span) * (RIGHT - LEFT);
  let highest = study.compulsoryMissRate;
  for (const row of rows) for (const rate of Object.values(row.missRate)) highest = Math.max(highest, rate);
  const step = [0.01, 0.02, 0.05, 0.1, 0.2].find((s) => highest / s <= 8) ?? 0.2;
  const top = Math.max(step, Math.ceil(highest / step - 1e-9) * step);
  const y = (rate: number) => BOTTOM - (rate / top) * (BOTTOM - TOP);

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
    `<title>URL-seen cache miss rate by cache size, ${escapeXml(subtitle(study, options.label))}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="28" font-size="17" font-weight="bold">URL-seen cache: miss rate by cache size</text>`,
    `<text x="${LEFT}" y="50" fill="#444444">${escapeXml(subtitle(study, options.label))}</text>`,
  );
  // Grid and axes.
  for (let i = 0; i * step <= top + 1e-9; i++) {
    const rate = i * step;
    const yy = round(y(rate));
    out.push(
      `<line x1="${LEFT}" y1="${yy}" x2="${RIGHT}" y2="${yy}" stroke="#e4e4e4"/>`,
      `<text x="${LEFT - 8}" y="${yy + 4}" text-anchor="end">${percent(rate, 0)}</text>`,
    );
  }
  for (const row of rows) {
    const xx = round(x(row.size));
    out.push(
      `<line x1="${xx}" y1="${TOP}" x2="${xx}" y2="${BOTTOM}" stroke="#f0f0f0"/>`,
      `<text x="${xx}" y="${BOTTOM + 18}" text-anchor="middle">${sizeLabel(row.size)}</text>`,
    );
  }
  out.push(
    `<rect x="${LEFT}" y="${TOP}" width="${RIGHT - LEFT}" height="${BOTTOM - TOP}" fill="none" stroke="#888888"/>`,
    `<text x="${(LEFT + RIGHT) / 2}" y="${BOTTOM + 42}" text-anchor="middle">cache size (URLs, log scale)</text>`,
    `<text transform="translate(20 ${(TOP + BOTTOM) / 2}) rotate(-90)" text-anchor="middle">misses per look-up</text>`,
  );
  if (options.markSize !== undefined && rows.some((r) => r.size === options.markSize)) {
    const xx = round(x(options.markSize));
    out.push(
      `<line x1="${xx}" y1="${TOP}" x2="${xx}" y2="${BOTTOM}" stroke="#666666" stroke-dasharray="1 3"/>`,
      `<text x="${xx - 4}" y="${TOP + 14}" fill="#444444" font-size="11" text-anchor="end">default cache size</text>`,
    );
  }
  // The floor: no cache does better than missing each URL once.
  const floor = round(y(study.compulsoryMissRate));
  out.push(
    `<line x1="${LEFT}" y1="${floor}" x2="${RIGHT}" y2="${floor}" stroke="#999999" stroke-width="1.5" stroke-dasharray="4 4"/>`,
  );
  // Curves, MIN last so it is drawn on top.
  for (const policy of study.policies) {
    const style = STYLE[policy];
    const points = rows.map((row) => [round(x(row.size)), round(y(row.missRate[policy] ?? 0))] as const);
    out.push(
      `<polyline fill="none" stroke="${style.color}" stroke-width="2"${style.dash ? ` stroke-dasharray="${style.dash}"` : ''} points="${points.map((p) => p.join(',')).join(' ')}"/>`,
    );
    for (const [px, py] of points) out.push(marker(style.marker, px, py, style.color));
  }
  // Legend, right of the plot.
  const legendX = RIGHT + 24;
  out.push(`<text x="${legendX}" y="${TOP + 4}" font-weight="bold">policy</text>`);
  study.policies.forEach((policy, i) => {
    const style = STYLE[policy];
    const ly = TOP + 28 + i * 24;
    out.push(
      `<line x1="${legendX}" y1="${ly}" x2="${legendX + 36}" y2="${ly}" stroke="${style.color}" stroke-width="2"${style.dash ? ` stroke-dasharray="${style.dash}"` : ''}/>`,
      marker(style.marker, legendX + 18, ly, style.color),
      `<text x="${legendX + 46}" y="${ly + 4}">${LEGEND[policy]}</text>`,
    );
  });
  const floorY = TOP + 28 + study.policies.length * 24;
  out.push(
    `<line x1="${legendX}" y1="${floorY}" x2="${legendX + 36}" y2="${floorY}" stroke="#999999" stroke-width="1.5" stroke-dasharray="4 4"/>`,
    `<text x="${legendX + 46}" y="${floorY + 4}">infinite cache</text>`,
    `<text x="${legendX + 46}" y="${floorY + 20}" fill="#444444" font-size="11">(each URL's first look-up)</text>`,
    '</svg>',
  );
  return `${out.join('\n')}\n`;
}

const LEGEND: Record<CachePolicy, string> = {
  LRU: 'LRU',
  CLOCK: 'CLOCK',
  RANDOM: 'RANDOM',
  STATIC: 'STATIC',
  MIN: 'MIN (clairvoyant)',
};

function subtitle(study: CacheStudy, label: string | undefined): string {
  const parts = [
    `${study.lookups.toLocaleString('en-US')} look-ups of ${study.distinct.toLocaleString('en-US')} URLs`,
    `infinite cache ${percent(study.compulsoryMissRate, 1)}`,
  ];
  return label === undefined ? parts.join(', ') : `${label}: ${parts.join(', ')}`;
}

function marker(shape: (typeof STYLE)[CachePolicy]['marker'], cx: number, cy: number, color: string): string {
  switch (shape) {
    case 'circle':
      return `<circle cx="${cx}" cy="${cy}" r="3.5" fill="${color}"/>`;
    case 'square':
      return `<rect x="${round(cx - 3.5)}" y="${round(cy - 3.5)}" width="7" height="7" fill="${color}"/>`;
    case 'triangle':
      return `<polygon points="${cx},${round(cy - 4.5)} ${round(cx + 4.5)},${round(cy + 3.5)} ${round(cx - 4.5)},${round(cy + 3.5)}" fill="${color}"/>`;
    case 'diamond':
      return `<polygon points="${cx},${round(cy - 5)} ${round(cx + 5)},${cy} ${cx},${round(cy + 5)} ${round(cx - 5)},${cy}" fill="${color}"/>`;
    case 'cross':
      return `<path d="M${round(cx - 4)} ${round(cy - 4)}L${round(cx + 4)} ${round(cy + 4)}M${round(cx - 4)} ${round(cy + 4)}L${round(cx + 4)} ${round(cy - 4)}" stroke="${color}" stroke-width="2"/>`;
  }
}

/** 256, 512, 1K, ..., 512K, 1M. */
export function sizeLabel(size: number): string {
  if (size >= 2 ** 20 && size % 2 ** 20 === 0) return `${size / 2 ** 20}M`;
  if (size >= 1024 && size % 1024 === 0) return `${size / 1024}K`;
  return String(size);
}

function percent(rate: number, digits: number): string {
  return `${(rate * 100).toFixed(digits)}%`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
