// TEMPORARY: replaced by the handlers work (a placeholder so CDK has something to bundle).
export async function handler(): Promise<never> {
  throw new Error('handler not wired yet');
}
