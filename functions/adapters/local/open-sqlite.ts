/**
 * Opens a local SQLite file with its schema, for the stores that keep one (the crawl's state,
 * the recrawl archive).
 */
import { DatabaseSync } from 'node:sqlite';

/**
 * The database at `path` with `schema` applied. When the schema cannot be applied (the file is
 * locked by another process, or is not a database) it closes it before rethrowing: nothing is left open.
 */
export function openSqlite(path: string, schema: string): DatabaseSync {
  const db = new DatabaseSync(path);
  try {
    db.exec(schema);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
