import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AddressGates } from '../../../functions/embedded/address-gates.ts';
import { type HostSlot, newHostSlot } from '../../../functions/embedded/host-heap.ts';
import { stagedLookup } from '../../fixtures/hostile-routes.ts';

describe('AddressGates', () => {
  test('hosts on one address take turns, and the next waits for the gap', async () => {
    const resolved: string[] = [];
    const { lookup } = stagedLookup({ 'a.test': '10.0.0.1', 'b.test': '10.0.0.1', 'c.test': '10.0.0.2' });
    const gates = new AddressGates((slot) => resolved.push(slot.host), lookup);
    const [a, b, c] = ['a.test', 'b.test', 'c.test'].map(newHostSlot) as [HostSlot, HostSlot, HostSlot];
    for (const slot of [a, b, c]) assert.equal(gates.check(slot, 0), 'resolving');
    assert.equal(gates.resolving, 3);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(resolved.sort(), ['a.test', 'b.test', 'c.test']);
    assert.equal(gates.resolving, 0);
    assert.equal(gates.addressOf('b.test'), '10.0.0.1');

    assert.equal(gates.check(a, 0), 'go');
    gates.acquire(a);
    assert.equal(gates.check(b, 0), 'busy', 'same address, request in flight');
    assert.equal(gates.check(c, 0), 'go', 'another address');
    assert.deepEqual(gates.release(a, 500), [b], 'the waiting host is handed back');
    assert.equal(gates.check(b, 100), 'gap');
    assert.equal(b.nextAt, 500);
    assert.equal(gates.check(b, 500), 'go');
  });

  test('an IP literal needs no lookup; a name that does not resolve has no gate', async () => {
    const { lookup, calls } = stagedLookup({});
    const gates = new AddressGates(() => {}, lookup);
    const literal = newHostSlot('127.0.0.5');
    const v6 = newHostSlot('[::1]');
    assert.equal(gates.check(literal, 0), 'go');
    assert.equal(gates.check(v6, 0), 'go');
    assert.equal(gates.addressOf('[::1]'), '::1');
    const unknown = newHostSlot('nowhere.test');
    assert.equal(gates.check(unknown, 0), 'resolving');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(gates.check(unknown, 0), 'go');
    gates.acquire(unknown);
    assert.equal(gates.check(unknown, 0), 'go', 'no gate: only its own host rule');
    assert.equal(calls.get('127.0.0.5'), undefined);
  });
});
