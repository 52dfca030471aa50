/**
 * A failure with a stable `code` that retrying the same call cannot help (`retryable` false): bad
 * input, a store used after it closed, a state that does not match. Subclasses set their `name`
 * and narrow the codes (README, "Errors").
 */
export class PermanentError<Code extends string = string> extends Error {
  override readonly name: string = 'PermanentError';
  readonly code: Code;
  readonly retryable = false;

  constructor(code: Code, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
