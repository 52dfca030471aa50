/**
 * Text from pages (titles, body text, URLs, server messages) reaches the user's terminal only
 * through here: control characters are shown as escapes, so a page cannot clear the screen,
 * retitle the window, move the cursor or hide text with bidirectional overrides.
 */

/**
 * C0 controls but tab and newline, DEL, C1 controls (0x9b is a one-byte CSI on some terminals),
 * and the Unicode bidirectional controls (text that reads differently than it is).
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_OR_NEWLINE =
  /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escaped(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character written as `\xNN` or `\uNNNN`; newlines kept when `lines`. */
export function terminalSafe(text: string, { lines = true }: { lines?: boolean } = {}): string {
  return text.replace(lines ? UNSAFE : UNSAFE_OR_NEWLINE, escaped);
}

/** Writes lines to stdout, made terminal-safe. */
export function print(text: string): void {
  process.stdout.write(`${terminalSafe(text)}\n`);
}

/** Writes lines to stderr, made terminal-safe. */
export function printError(text: string): void {
  process.stderr.write(`${terminalSafe(text)}\n`);
}
