/**
 * Types for the two undici files the fetcher imports directly. The package index also loads
 * fetch, cookies, WebSocket, EventSource, caches and mocks at startup (about 50 ms of CPU per
 * crawl), none of which the fetcher uses.
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
