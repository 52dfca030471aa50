import { CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Gives a construct's CloudFormation resource a fixed logical ID (its construct id by default).
 *
 * Why: the synthesized template is a contract. The local stand-in provisions emulator resources
 * by reading it, and people look resources up in the console by these names. CDK's generated IDs
 * carry a hash of the construct path, so moving a construct between files or parents would
 * rename (and, for tables and buckets, replace) the resource. A pinned ID survives refactoring.
 */
export function pinLogicalId(construct: IConstruct, logicalId: string = construct.node.id): void {
  const child = construct.node.defaultChild;
  if (!CfnElement.isCfnElement(child)) {
    throw new Error(`${construct.node.path} has no CloudFormation resource to pin as ${logicalId}`);
  }
  child.overrideLogicalId(logicalId);
}
