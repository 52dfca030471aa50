/**
 * Text from pages (titles, body text, URLs, server messages) reaches the user's terminal only
 * through here: control characters are shown as escapes, so a page cannot clear the screen,
 * retitle the window, move the cursor or hide text with bidirectional overrides. The policy (which
 * characters, and how JSON and CSV carry them) is core/text/safe-text.ts; JSON is printed with its
 * `safeJson`, which leaves nothing for `print` to escape, so it stays valid JSON.
 */
import { visibleText } from '../core/text/safe-text.ts';

/** `text` with every control character written as `\xNN` or `\uNNNN`; newlines kept when `lines`. */
export function terminalSafe(text: string, options: { lines?: boolean } = {}): string {
  return visibleText(text, options);
}

/** Writes lines to stdout, made terminal-safe. */
export function print(text: string): void {
  process.stdout.write(`${terminalSafe(text)}\n`);
}

/** Writes lines to stderr, made terminal-safe. */
export function printError(text: string): void {
  process.stderr.write(`${terminalSafe(text)}\n`);
}
