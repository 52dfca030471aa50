/**
 * The fetcher imports two of undici's own files (lib/dispatcher/agent.js, lib/core/connect.js)
 * instead of its package index, which loads fetch, WebSocket, caches and more at every start.
 * Those paths are not undici's public API, so package.json pins undici exactly; this test fails
 * when an upgrade moves or changes them, before anything else does.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import * as undici from 'undici';
import buildConnector from 'undici/lib/core/connect.js';
import Agent from 'undici/lib/dispatcher/agent.js';

describe("undici's files the fetcher imports", () => {
  it('are the classes the package index exports', () => {
    assert.equal(Agent, undici.Agent);
    assert.equal(buildConnector, undici.buildConnector);
  });

  it('come from the exact version package.json pins', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const installed = JSON.parse(
      readFileSync(new URL('../../../node_modules/undici/package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    assert.match(manifest.dependencies.undici!, /^\d+\.\d+\.\d+$/, 'undici is pinned to one version');
    assert.equal(installed.version, manifest.dependencies.undici);
  });
});
