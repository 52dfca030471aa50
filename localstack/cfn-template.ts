/**
 * The slice of a CloudFormation template the stand-in reads, and the intrinsic functions it can
 * evaluate (those CDK puts into Lambda environments and trigger properties).
 */

/** One resource as `cdk synth` writes it. */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  DependsOn?: string | string[];
  Condition?: string;
}

/** A synthesized template: resources and (for `Ref` to a parameter) parameter defaults. */
export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Parameters?: Record<string, { Type?: string; Default?: unknown }>;
  Outputs?: Record<string, unknown>;
}

/** Stable codes for templates the stand-in cannot run. */
export type TemplateErrorCode =
  | 'unsupported-intrinsic'
  | 'unknown-resource'
  | 'unknown-attribute'
  | 'invalid-template';

/** The template uses something the stand-in cannot evaluate; `path` says where. */
export class TemplateError extends Error {
  readonly code: TemplateErrorCode;
  readonly path: string;
  constructor(code: TemplateErrorCode, path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'TemplateError';
    this.code = code;
    this.path = path;
  }
}

/** What a resource reference resolves to: `Ref` gives `ref`, `Fn::GetAtt` reads `attributes`. */
export interface ResolvedReference {
  ref: string;
  attributes: Record<string, string>;
}

/** Values the resolver needs from its caller. */
export interface IntrinsicContext {
  region: string;
  accountId: string;
  stackName: string;
  parameters: Record<string, unknown>;
  /** Provisions (or looks up) a resource and returns what references to it resolve to. */
  reference(logicalId: string, path: string): Promise<ResolvedReference>;
}

/** Marker for `Ref: AWS::NoValue`: the enclosing property is removed. */
export const NO_VALUE: unique symbol = Symbol('AWS::NoValue');

function pseudoParameter(name: string, context: IntrinsicContext): string | typeof NO_VALUE | undefined {
  switch (name) {
    case 'AWS::Region':
      return context.region;
    case 'AWS::AccountId':
      return context.accountId;
    case 'AWS::Partition':
      return 'aws';
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
    case 'AWS::StackName':
      return context.stackName;
    case 'AWS::StackId':
      return `arn:aws:cloudformation:${context.region}:${context.accountId}:stack/${context.stackName}/local`;
    case 'AWS::NoValue':
      return NO_VALUE;
    default:
      return undefined;
  }
}

async function referenceValue(name: string, context: IntrinsicContext, path: string) {
  const pseudo = pseudoParameter(name, context);
  if (pseudo !== undefined) return pseudo;
  if (context.parameters[name] !== undefined) return context.parameters[name];
  return (await context.reference(name, path)).ref;
}

async function attributeValue(logicalId: string, attribute: string, context: IntrinsicContext, path: string) {
  const resolved = await context.reference(logicalId, path);
  const value = resolved.attributes[attribute];
  if (value === undefined) {
    throw new TemplateError(
      'unknown-attribute',
      path,
      `Fn::GetAtt ${logicalId}.${attribute} is not available locally (known: ${Object.keys(resolved.attributes).join(', ') || 'none'})`,
    );
  }
  return value;
}

function asString(value: unknown, path: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new TemplateError('invalid-template', path, `expected a string, got ${JSON.stringify(value)}`);
}

async function substitute(
  text: string,
  variables: Record<string, unknown>,
  context: IntrinsicContext,
  path: string,
): Promise<string> {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(/\$\{([^}]+)\}/g)) {
    out += text.slice(last, match.index);
    last = (match.index ?? 0) + match[0].length;
    const name = match[1] ?? '';
    if (name.startsWith('!')) {
      out += `\${${name.slice(1)}}`;
    } else if (name in variables) {
      out += asString(await resolveIntrinsics(variables[name], context, `${path}.${name}`), path);
    } else if (name.includes('.')) {
      const [id = '', attribute = ''] = name.split('.', 2);
      out += await attributeValue(id, attribute, context, path);
    } else {
      out += asString(await referenceValue(name, context, path), path);
    }
  }
  return out + text.slice(last);
}

/**
 * Evaluates the intrinsic functions in `value`: Ref (resources, parameters, pseudo parameters),
 * Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::Base64, Fn::GetAZs. Anything else
 * (conditions, imports) raises a {@link TemplateError} naming `path`.
 */
export async function resolveIntrinsics(
  value: unknown,
  context: IntrinsicContext,
  path: string,
): Promise<unknown> {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const item = await resolveIntrinsics(value[i], context, `${path}[${i}]`);
      if (item !== NO_VALUE) out.push(item);
    }
    return out;
  }
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  const only = keys.length === 1 ? keys[0] : undefined;
  if (only === 'Ref') return referenceValue(asString(object.Ref, path), context, path);
  if (only === 'Fn::GetAtt') {
    const spec = object['Fn::GetAtt'];
    const [id, attribute] = Array.isArray(spec) ? spec : asString(spec, path).split(/\.(.*)/s);
    return attributeValue(asString(id, path), asString(attribute, path), context, path);
  }
  if (only === 'Fn::Join') {
    const [separator, items] = object['Fn::Join'] as [string, unknown];
    const parts = await resolveIntrinsics(items, context, `${path}.Fn::Join`);
    if (!Array.isArray(parts)) throw new TemplateError('invalid-template', path, 'Fn::Join needs a list');
    return parts.map((p) => asString(p, path)).join(separator);
  }
  if (only === 'Fn::Sub') {
    const spec = object['Fn::Sub'];
    if (typeof spec === 'string') return substitute(spec, {}, context, path);
    const [text, variables] = spec as [string, Record<string, unknown>];
    return substitute(text, variables ?? {}, context, path);
  }
  if (only === 'Fn::Select') {
    const [index, items] = object['Fn::Select'] as [unknown, unknown];
    const list = await resolveIntrinsics(items, context, `${path}.Fn::Select`);
    const at = Number(await resolveIntrinsics(index, context, path));
    if (!Array.isArray(list) || !(at in list)) {
      throw new TemplateError('invalid-template', path, 'Fn::Select index out of range');
    }
    return list[at];
  }
  if (only === 'Fn::Split') {
    const [separator, text] = object['Fn::Split'] as [string, unknown];
    return asString(await resolveIntrinsics(text, context, path), path).split(separator);
  }
  if (only === 'Fn::Base64') {
    return Buffer.from(asString(await resolveIntrinsics(object['Fn::Base64'], context, path), path)).toString(
      'base64',
    );
  }
  if (only === 'Fn::GetAZs') return [`${context.region}a`, `${context.region}b`, `${context.region}c`];
  if (only?.startsWith('Fn::')) {
    throw new TemplateError('unsupported-intrinsic', path, `${only} is not supported by the local stand-in`);
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const item = await resolveIntrinsics(object[key], context, `${path}.${key}`);
    if (item !== NO_VALUE) out[key] = item;
  }
  return out;
}
