/**
 * Where a deployed crawler's API is and how to call it:
 *
 *   API      --api URL | --stack NAME (its ApiUrl output, read with CloudFormation DescribeStacks)
 *            | CRAWLSTACK_API | .tmp/cloud-local.json (written by `npm run cloud:local`)
 *   auth     a bearer token (--token, CRAWLSTACK_TOKEN, or the cloud:local file): the local stand-in;
 *            otherwise SigV4 for service `lambda` with the default credential chain
 *   region   --region | the URL (<id>.lambda-url.<region>.on.aws) | the cloud:local file | the
 *            SDK's chain (AWS_REGION, the profile's region)
 */
import { CloudCliError } from './cloud-cli-error.ts';
import { findCloudLocalInfo, processAlive } from './cloud-local-file.ts';

/** How requests are authenticated. */
export type CloudAuth =
  | { kind: 'bearer'; token: string }
  | { kind: 'sigv4'; region: string; regionFrom: string; profile?: string };

/** The API to call, and how. */
export interface CloudTarget {
  /** Base URL, without a trailing slash. */
  api: string;
  /** Where the URL came from, for messages (`--api`, `stack CrawlstackStack`, ...). */
  from: string;
  auth: CloudAuth;
}

/** The options every `crawlstack cloud` command takes. */
export interface TargetOptions {
  api?: string | undefined;
  stack?: string | undefined;
  region?: string | undefined;
  profile?: string | undefined;
  token?: string | undefined;
}

/** The region in a function URL's host name, if it names one. */
export function regionOfUrl(url: string): string | undefined {
  const host = URL.parse(url)?.hostname ?? '';
  return /^[a-z0-9]+\.lambda-url\.([a-z0-9-]+)\.on\.aws$/.exec(host)?.[1];
}

/** The stack output `npx cdk deploy` writes the API's URL to (lib/crawlstack-stack.ts). */
export const API_URL_OUTPUT = 'ApiUrl';

/** Reads `--stack NAME`'s API URL from CloudFormation (DescribeStacks). */
async function apiOfStack(
  stack: string,
  region: string | undefined,
  profile: string | undefined,
): Promise<string> {
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  const client = new CloudFormationClient({
    ...(region === undefined ? {} : { region }),
    ...(profile === undefined ? {} : { profile }),
  });
  try {
    const response = await client.send(new DescribeStacksCommand({ StackName: stack }));
    const outputs = response.Stacks?.[0]?.Outputs ?? [];
    const url = outputs.find((o) => o.OutputKey === API_URL_OUTPUT)?.OutputValue;
    if (url === undefined) {
      throw new CloudCliError(
        'NO_API',
        `stack ${stack} has no ${API_URL_OUTPUT} output (outputs: ${outputs.map((o) => o.OutputKey).join(', ') || 'none'}): is it a crawlstack stack?`,
      );
    }
    return url;
  } catch (error) {
    if (error instanceof CloudCliError) throw error;
    throw stackError(error, stack, await client.config.region().catch(() => region ?? '?'));
  } finally {
    client.destroy();
  }
}

function stackError(error: unknown, stack: string, region: string): CloudCliError {
  const e = error as { name?: string; message?: string };
  const message = e.message ?? String(error);
  if (e.name === 'CredentialsProviderError') return noCredentials(error);
  if (e.name === 'ValidationError' && /does not exist/.test(message)) {
    return new CloudCliError(
      'NO_API',
      `no stack ${stack} in region ${region} (npx cdk deploy creates it; --region names another region)`,
    );
  }
  if (e.name === 'AccessDenied' || e.name === 'AccessDeniedException' || /not authorized/.test(message)) {
    return new CloudCliError(
      'ACCESS_DENIED',
      `reading stack ${stack}'s outputs needs cloudformation:DescribeStacks on it: ${message} (or pass --api with its ApiUrl output)`,
    );
  }
  if (/Region is missing/i.test(message)) return noRegion('--stack');
  return new CloudCliError('SERVER', `could not read stack ${stack} in ${region}: ${message}`, {
    cause: error,
  });
}

/** The message for "the credential chain found nothing". */
export function noCredentials(cause: unknown): CloudCliError {
  const said = (cause as Error | undefined)?.message ?? '';
  const detail = said === '' || /from any providers/.test(said) ? '' : ` (${said.split('\n')[0]})`;
  return new CloudCliError(
    'NO_CREDENTIALS',
    `no AWS credentials found${detail}. Configure them as for the AWS CLI: \`aws configure\` (or ` +
      '`aws configure sso` then `aws sso login`), a profile with --profile or AWS_PROFILE, or AWS_ACCESS_KEY_ID and ' +
      "AWS_SECRET_ACCESS_KEY; they need lambda:InvokeFunctionUrl on the stack's Api function. " +
      '(For npm run cloud:local, run this from the project folder while it runs, or pass --token.)',
    { cause },
  );
}

function noRegion(what: string): CloudCliError {
  return new CloudCliError(
    'NO_API',
    `which region is ${what} in? Pass --region, or set AWS_REGION or a region in your AWS profile`,
  );
}

/** The region the SDK's own chain resolves (AWS_REGION, AWS_DEFAULT_REGION, the profile's region). */
async function chainRegion(profile: string | undefined): Promise<string | undefined> {
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
  const client = new CloudFormationClient(profile === undefined ? {} : { profile });
  try {
    return await client.config.region();
  } catch {
    return undefined;
  } finally {
    client.destroy();
  }
}

/**
 * Resolves the target; `cwd` is the project folder, where the cloud:local file is looked for
 * (and only there); `warn` says why such a file is ignored.
 */
export async function resolveTarget(
  options: TargetOptions,
  env: Record<string, string | undefined>,
  cwd: string,
  warn: (line: string) => void = () => undefined,
): Promise<CloudTarget> {
  if (options.api !== undefined && options.stack !== undefined) {
    throw new CloudCliError('NO_API', '--api and --stack name the API twice: give one');
  }
  let api: string | undefined;
  let from = '';
  let read = false;
  let found: ReturnType<typeof findCloudLocalInfo>;
  // Read once (its warning said once), and only when needed.
  const localFile = () => {
    if (!read) found = findCloudLocalInfo(cwd, warn);
    read = true;
    return found;
  };
  let local: ReturnType<typeof findCloudLocalInfo>;
  if (options.api !== undefined) {
    api = options.api;
    from = '--api';
  } else if (options.stack !== undefined) {
    api = await apiOfStack(options.stack, options.region, options.profile);
    from = `stack ${options.stack}`;
  } else if (env.CRAWLSTACK_API !== undefined && env.CRAWLSTACK_API !== '') {
    api = env.CRAWLSTACK_API;
    from = 'CRAWLSTACK_API';
  } else {
    local = localFile();
    if (local !== undefined && !processAlive(local.info.pid)) {
      throw new CloudCliError(
        'NO_API',
        `no API given, and ${local.path} is from an npm run cloud:local that is no longer running (pid ${local.info.pid}): start it again, or pass --api URL`,
      );
    }
    api = local?.info.api;
    from = local === undefined ? '' : local.path;
  }
  if (api === undefined) {
    throw new CloudCliError(
      'NO_API',
      'no API given: pass --api URL (the ApiUrl output of `npx cdk deploy`), --stack NAME (reads it ' +
        'from CloudFormation), or set CRAWLSTACK_API; with npm run cloud:local running, run this from ' +
        'the project folder',
    );
  }
  const parsed = URL.parse(api);
  if (parsed === null || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new CloudCliError(
      'NO_API',
      `the API URL from ${from} is not an http(s) URL: ${JSON.stringify(api)}`,
    );
  }
  const base = api.replace(/\/+$/, '');

  // The same API as the cloud:local file: its token and region come with it.
  local ??= localFile();
  const sameLocal =
    local !== undefined && local.info.api.replace(/\/+$/, '') === base ? local.info : undefined;
  const token = options.token ?? nonEmpty(env.CRAWLSTACK_TOKEN) ?? sameLocal?.token;
  if (token !== undefined) return { api: base, from, auth: { kind: 'bearer', token } };

  let region = options.region;
  let regionFrom = '--region';
  if (region === undefined) {
    region = regionOfUrl(base);
    regionFrom = 'the URL';
  }
  if (region === undefined && sameLocal !== undefined) {
    region = sameLocal.region;
    regionFrom = 'the cloud:local file';
  }
  if (region === undefined) {
    region = await chainRegion(options.profile);
    regionFrom = 'your AWS configuration';
  }
  if (region === undefined) throw noRegion(`the API at ${base}`);
  return {
    api: base,
    from,
    auth: {
      kind: 'sigv4',
      region,
      regionFrom,
      ...(options.profile === undefined ? {} : { profile: options.profile }),
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
