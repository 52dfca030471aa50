/**
 * IAM roles and resource policies as the stand-in reads them from a template: what provisioning
 * returns, and the few AWS managed policies a Lambda role commonly attaches (their documents are
 * AWS's, reproduced here because the stand-in cannot fetch them).
 */

/** A policy document with a name (inline policy name, or the managed policy's ARN). */
export interface NamedPolicy {
  name: string;
  document: unknown;
}

/** An execution role: every policy attached to it, intrinsics resolved to provisioned ARNs. */
export interface RoleSpec {
  logicalId: string;
  name: string;
  arn: string;
  policies: NamedPolicy[];
}

/** A queue or bucket policy and the resources it is attached to (queue ARNs, bucket ARNs). */
export interface ResourcePolicySpec {
  logicalId: string;
  resourceArns: string[];
  document: unknown;
}

const LOGS_WRITE = ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'];

/** AWS managed policies by the part of the ARN after `:iam::aws:policy/`. */
const AWS_MANAGED: Record<string, unknown> = {
  'service-role/AWSLambdaBasicExecutionRole': {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: LOGS_WRITE, Resource: '*' }],
  },
  'service-role/AWSLambdaSQSQueueExecutionRole': {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', ...LOGS_WRITE],
        Resource: '*',
      },
    ],
  },
  AWSXRayDaemonWriteAccess: {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: [
          'xray:PutTraceSegments',
          'xray:PutTelemetryRecords',
          'xray:GetSamplingRules',
          'xray:GetSamplingTargets',
          'xray:GetSamplingStatisticSummaries',
        ],
        Resource: '*',
      },
    ],
  },
};

/** The document of an AWS managed policy the stand-in knows, by ARN (any partition). */
export function awsManagedPolicy(arn: string): unknown | undefined {
  const match = /^arn:[^:]+:iam::aws:policy\/(.+)$/.exec(arn);
  return match?.[1] === undefined ? undefined : AWS_MANAGED[match[1]];
}
