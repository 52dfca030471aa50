/**
 * The one policy for crawled text (titles, fields, URLs, server messages) that the CLI prints or
 * exports: no character that a terminal, an editor or a spreadsheet acts on reaches them raw.
 *
 *   unsafe      C0 controls (but tab and line feed in text), DEL, C1 controls (U+0080-009F:
 *               U+009B is a one-byte CSI on some terminals), the bidirectional controls (U+061C,
 *               U+200E/200F, U+202A-202E, U+2066-2069: text that reads differently than it is),
 *               and the line and paragraph separators U+2028/2029
 *   JSON        escaped as \uXXXX after JSON.stringify (which escapes C0 only), so the text still
 *               parses to the same value
 *   text, CSV   escaped visibly as \xNN or \uNNNN (a display form: a backslash already in the text
 *               is not doubled)
 *   CSV         a cell that begins with = + - @ tab or CR is prefixed with ' (OWASP's guard against
 *               formula injection), unless the caller asks for raw formulas; a plain number is not
 */

/** Unsafe characters but tab and line feed (text that may span lines). */
const UNSAFE_IN_LINES =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** Unsafe characters but tab (one line). */
const UNSAFE_IN_LINE =
  /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves raw of the unsafe characters (it escapes C0 itself). */
const UNSAFE_AFTER_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function visible(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

function jsonEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every unsafe character written as `\xNN` or `\uNNNN`; line feeds kept when `lines`. */
export function visibleText(text: string, { lines = true }: { lines?: boolean } = {}): string {
  return text.replace(lines ? UNSAFE_IN_LINES : UNSAFE_IN_LINE, visible);
}

/**
 * JSON text of `value` with no unsafe character raw: `JSON.stringify`, then the characters it
 * leaves raw (DEL, C1, bidi, U+2028/2029) as `\uXXXX`. `JSON.parse` reads back the same value.
 */
export function safeJson(value: unknown, space?: number): string {
  return escapeJsonText(JSON.stringify(value, null, space));
}

/**
 * JSON text (a line of a JSON Lines file, as it was written) with the unsafe characters it holds
 * raw escaped as `\uXXXX`. Valid JSON holds them only inside strings (raw C0 is not valid there),
 * so the text parses to the same value.
 */
export function escapeJsonText(json: string): string {
  return json.replace(UNSAFE_AFTER_JSON, jsonEscape);
}

/** The first characters of a spreadsheet formula (or of one that a tab or CR hides). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain number: a spreadsheet reads it as the number, not as a formula. */
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** How CSV cells are written. */
export interface CsvCellPolicy {
  /** Write cells that begin like a formula as they are (no `'` prefix). Default false. */
  rawFormulas?: boolean;
}

/**
 * A CSV cell's text under the policy: unsafe characters escaped visibly (tab and line feed kept),
 * then `'` before a cell that a spreadsheet would run as a formula.
 */
export function safeCsvText(text: string, policy: CsvCellPolicy = {}): string {
  const shown = visibleText(text);
  if (policy.rawFormulas === true) return shown;
  return FORMULA_START.test(shown) && !PLAIN_NUMBER.test(shown) ? `'${shown}` : shown;
}
