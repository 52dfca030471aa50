/**
 * Builds CrawlstackStack for template assertions, the way `cdk synth` does: same context
 * (cdk.json's feature flags), real esbuild bundling unless a test opts out.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CrawlstackStack, type CrawlstackStackProps } from '../../lib/crawlstack-stack.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};

/** A synthesized stack and where its cloud assembly was written. */
export interface SynthResult {
  app: App;
  stack: CrawlstackStack;
  template: Template;
  outdir: string;
  /** Removes the assembly directory (bundled assets included). */
  dispose(): void;
}

/** Options of {@link synthStack}. */
export interface SynthOptions {
  /** Bundle the functions with esbuild. `false` sets CDK's `aws:cdk:bundling-stacks` to none. @default true */
  bundle?: boolean;
  /**
   * Run CDK's built-in CloudFormation validation, which fails synthesis on a finding (cdk.json
   * sets validateAgainstDefaultRules). Its WebAssembly engine takes ~6 s to compile once per
   * process, so tests about settings turn it off. @default true
   */
  validate?: boolean;
  /** Extra context on top of cdk.json's. */
  context?: Record<string, unknown>;
}

/** Synthesizes one stack into a fresh temporary directory. */
export function synthStack(props: CrawlstackStackProps = {}, options: SynthOptions = {}): SynthResult {
  const outdir = mkdtempSync(join(tmpdir(), 'crawlstack-cdk-'));
  const context: Record<string, unknown> = { ...cdkJson.context, ...options.context };
  if (options.bundle === false) context['aws:cdk:bundling-stacks'] = [];
  const dispose = () => rmSync(outdir, { recursive: true, force: true });
  try {
    const app = new App({ outdir, context, builtinCloudFormationValidation: options.validate ?? true });
    const stack = new CrawlstackStack(app, 'CrawlstackStack', props);
    const template = Template.fromStack(stack);
    return { app, stack, template, outdir, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

/** A CloudFormation resource as it appears in the template. */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

/** One IAM policy statement, normalised to arrays. */
export interface Statement {
  Effect: string;
  Action: string[];
  /** Each resource entry as JSON text, so tests can look for a logical ID inside intrinsics. */
  Resource: string[];
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The logical ID of a function's execution role. */
export function roleOf(template: Template, functionId: string): string {
  const fn = template.toJSON().Resources[functionId] as CfnResource | undefined;
  const role = fn?.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
  const id = role?.['Fn::GetAtt']?.[0];
  if (!id) throw new Error(`no role found for function ${functionId}`);
  return id;
}

/** Every statement of every AWS::IAM::Policy attached to the role, and of the role's inline policies. */
export function statementsOf(template: Template, roleId: string): Statement[] {
  const resources = template.toJSON().Resources as Record<string, CfnResource>;
  const documents: { Statement: unknown }[] = [];
  for (const resource of Object.values(resources)) {
    const props = resource.Properties ?? {};
    if (resource.Type === 'AWS::IAM::Policy') {
      const roles = toArray(props.Roles as { Ref: string }[] | undefined);
      if (roles.some((r) => r.Ref === roleId)) documents.push(props.PolicyDocument as { Statement: unknown });
    }
  }
  const role = resources[roleId];
  for (const policy of toArray(role?.Properties?.Policies as { PolicyDocument: { Statement: unknown } }[])) {
    documents.push(policy.PolicyDocument);
  }
  return documents.flatMap((doc) =>
    toArray(doc.Statement as Record<string, unknown>[]).map((s) => ({
      Effect: s.Effect as string,
      Action: toArray(s.Action as string | string[]),
      Resource: toArray(s.Resource).map((r) => JSON.stringify(r)),
    })),
  );
}

/**
 * Actions the role is allowed on a resource, matched by logical ID (a `Ref`/`Fn::GetAtt` of it,
 * with or without a `/*` suffix for objects).
 */
export function allowedOn(statements: readonly Statement[], logicalId: string): Set<string> {
  const needle = `"${logicalId}"`;
  const actions = new Set<string>();
  for (const s of statements) {
    if (s.Effect === 'Allow' && s.Resource.some((r) => r.includes(needle))) {
      for (const a of s.Action) actions.add(a);
    }
  }
  return actions;
}
