import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/**
 * Runs htmlparser2's tokenizer over the whole of `html` in one piece (so that the callbacks'
 * offsets are offsets into `html`), then ends it; `decodeEntities` as the Tokenizer's option.
 */
export function tokenize(html: string, callbacks: TokenizerCallbacks, decodeEntities: boolean): void {
  const tokenizer = new Tokenizer({ decodeEntities }, callbacks);
  tokenizer.write(html);
  tokenizer.end();
}
