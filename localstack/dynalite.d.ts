// dynalite ships no types; this is the part of its API the stand-in uses.
declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    /** ms a table stays CREATING / DELETING / UPDATING (500 by default). */
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
    /** LevelDB directory; in memory when absent. */
    path?: string;
    verbose?: boolean;
    debug?: boolean;
  }

  /** An http.Server whose request listener is the DynamoDB JSON API. */
  export default function dynalite(options?: DynaliteOptions): Server;
}
