import { TextDecoder } from 'node:util';

// One decoder per valid WHATWG label (after trimming and lowercasing). The label set is fixed by
// the Encoding Standard, so the cache cannot grow with hostile input: unknown labels are not kept.
const decoders = new Map<string, TextDecoder>();

/**
 * The TextDecoder for an encoding label (WHATWG label mapping: `latin1` and `iso-8859-1` ->
 * windows-1252, `x-sjis` -> shift_jis, `utf-16` -> utf-16le, ...), or null for an unknown label
 * or one Node cannot decode (`replacement`). `x-user-defined` decodes as windows-1252, as the HTML
 * prescan prescribes. Decoders are shared: they are used without `stream`, so they hold no state.
 */
export function decoderFor(label: string): TextDecoder | null {
  const key = label.trim().toLowerCase();
  let decoder = decoders.get(key);
  if (decoder !== undefined) return decoder;
  try {
    decoder = new TextDecoder(key === 'x-user-defined' ? 'windows-1252' : key);
  } catch {
    return null;
  }
  decoders.set(key, decoder);
  return decoder;
}
