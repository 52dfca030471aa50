import type { CrawlConfig } from '../config.ts';

/** A field's value in pages.jsonl `extracted` and dataset.jsonl: one value, all values, or none. */
export type ExtractedValue = string | string[] | null;

/**
 * The `extract` setting as the selector strings `selectFields` reads (`"css"` or `"css@attr"`):
 * the string form is already one, the object form is joined.
 */
export function extractSelectors(extract: CrawlConfig['extract']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, field] of Object.entries(extract)) {
    out[name] =
      typeof field === 'string' ? field : field.attr ? `${field.selector}@${field.attr}` : field.selector;
  }
  return out;
}

/**
 * Shapes the values every selector matched (in document order) as each field asks: all of them
 * (the string form, or `all: true`), else the first one, `null` when nothing matched.
 */
export function shapeExtracted(
  extract: CrawlConfig['extract'],
  values: Record<string, string[]>,
): Record<string, ExtractedValue> {
  const out: Record<string, ExtractedValue> = {};
  for (const [name, field] of Object.entries(extract)) {
    const found = values[name] ?? [];
    out[name] = typeof field === 'string' || field.all ? found : (found[0] ?? null);
  }
  return out;
}
