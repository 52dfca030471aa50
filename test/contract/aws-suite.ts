import { after, before } from 'node:test';
import { type AwsBackend, openAwsBackend } from './backends.ts';

/**
 * Opens the AWS backend before the enclosing suite's tests and closes it after them. The function
 * returned makes what the suite needs from the backend (a table, a store) on its first call and
 * gives the same thing to every later call.
 */
export function awsSuite<T>(make: (aws: AwsBackend) => Promise<T>): () => Promise<T> {
  let aws: AwsBackend | undefined;
  let made: Promise<T> | undefined;
  before(async () => {
    aws = await openAwsBackend();
  });
  after(() => aws?.close());
  return () => {
    if (aws === undefined) throw new Error('the AWS backend opens before the suite runs');
    made ??= make(aws);
    return made;
  };
}
