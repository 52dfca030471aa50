import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AddressClass,
  classifyAddress,
  isBlockedAddress,
} from '../../../functions/core/net/address-policy.ts';

const TABLE: [string, AddressClass][] = [
  // public
  ['93.184.216.34', 'public'],
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['172.15.255.255', 'public'], // just below 172.16/12
  ['172.32.0.1', 'public'], // just above
  ['100.63.255.255', 'public'], // just below CGNAT
  ['100.128.0.1', 'public'], // just above
  ['223.255.255.255', 'public'], // just below multicast
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:81c::200e', 'public'],
  ['::ffff:8.8.8.8', 'public'], // IPv4-mapped: classified by the embedded address
  ['64:ff9b::808:808', 'public'], // NAT64 of 8.8.8.8
  ['2002:808:808::1', 'public'], // 6to4 of 8.8.8.8
  // loopback
  ['127.0.0.1', 'loopback'],
  ['127.0.0.5', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['2130706433', 'loopback'], // 127.0.0.1 as one number (inet_aton form)
  ['64:ff9b::7f00:1', 'loopback'], // NAT64 of 127.0.0.1
  ['2002:7f00:1::', 'loopback'], // 6to4 of 127.0.0.1
  // private
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['::ffff:192.168.0.1', 'private'],
  ['64:ff9b::a00:1', 'private'], // NAT64 of 10.0.0.1
  ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
  // link-local and metadata
  ['169.254.1.1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  // other non-public space
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['::127.0.0.1', 'reserved'], // deprecated IPv4-compatible form
  ['100::1', 'reserved'],
  ['fec0::1', 'reserved'], // deprecated site-local, outside 2000::/3
  ['4000::1', 'reserved'], // unallocated
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['2001:2::1', 'benchmarking'],
  ['2001::1', 'teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
  ['2001:10::1', 'reserved'], // ORCHID, inside 2001::/23
  // not addresses at all
  ['example.com', 'invalid'],
  ['', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
  ['256.1.1.1', 'invalid'],
];

describe('address policy', () => {
  for (const [address, expected] of TABLE) {
    it(`${address || '(empty)'} is ${expected}`, () => {
      assert.equal(classifyAddress(address), expected);
      assert.equal(isBlockedAddress(address), expected !== 'public');
    });
  }

  it('covers the whole table the brief asks for', () => {
    assert.ok(TABLE.length >= 40);
    const classes = new Set(TABLE.map(([, cls]) => cls));
    for (const cls of ['public', 'loopback', 'private', 'link-local', 'metadata', 'cgnat', 'multicast']) {
      assert.ok(classes.has(cls as AddressClass), cls);
    }
  });
});
