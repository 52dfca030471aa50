/**
 * The `crawlstack` command line. Subcommands are added as the runtime grows.
 */
export async function main(argv: string[]): Promise<number> {
  console.error(`crawlstack: unknown command "${argv[0] ?? ''}"`);
  return 1;
}
