/**
 * Types for the two undici files the fetcher imports directly. The package index also loads
 * fetch, cookies, WebSocket, EventSource, caches and mocks at startup (about 60-90 ms of CPU per
 * start of a bundle), none of which the fetcher uses. These paths are not undici's public API:
 * package.json pins undici to one version, and test/unit/fetch/undici-lib.test.ts checks they are
 * the classes the index exports, so an upgrade that moves them fails there first.
 */
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';

  const AgentClass: typeof Agent;
  export default AgentClass;
}

declare module 'undici/lib/core/connect.js' {
  import type { buildConnector } from 'undici';

  const build: typeof buildConnector;
  export default build;
}
