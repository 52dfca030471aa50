/**
 * The CDK app: `npm run synth`, `npx cdk deploy` (cdk.json runs this file with tsx).
 * Settings come from `crawlstack:*` context; see docs/cloud-infrastructure.md.
 */
import { App } from 'aws-cdk-lib';
import { readStackContext } from './context.ts';
import { CrawlstackStack } from './crawlstack-stack.ts';

const app = new App();
const { stackName, ...settings } = readStackContext(app.node);
new CrawlstackStack(app, stackName, settings);
app.synth();
