/**
 * The stand-in's per partition key write counts (localstack/endpoint-metrics.ts): which key took
 * the most write units in one wall-clock second, the figure AWS caps at 1,000 WCU per key.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EndpointMetricsRecorder, HOT_KEYS } from '../../../localstack/endpoint-metrics.ts';

const TABLE = 'crawls';

function recorder(clock: { ms: number }): EndpointMetricsRecorder {
  const r = new EndpointMetricsRecorder(() => clock.ms);
  r.dynamo(
    'CreateTable',
    {
      TableName: TABLE,
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    },
    200,
    {},
  );
  return r;
}

const put = (pk: string, sk: string, bytes = 10) => ({
  TableName: TABLE,
  Item: { pk: { S: pk }, sk: { S: sk }, body: { S: 'x'.repeat(bytes) } },
});

describe('units by item family', () => {
  it('names each charge by table, operation and a short partition key prefix, else the sort key prefix', () => {
    const r = recorder({ ms: 0 });
    r.dynamo('PutItem', put('crawl-1', 'host#a.example'), 200, {});
    r.dynamo('PutItem', put('crawl-1', 'host#b.example', 1500), 200, {});
    r.dynamo('PutItem', put('0f3a9c21-77', 'x#1'), 200, {});
    r.dynamo('PutItem', put('bq#c1#a.example', '3fe0#ab'), 200, {});
    r.dynamo('GetItem', { TableName: 'urls', Key: { pk: { S: 'bq#c1#a.example' } } }, 200, {
      Item: { pk: { S: 'bq#c1#a.example' } },
    });
    r.dynamo('GetItem', { TableName: 'urls', Key: { pk: { S: '0f3a9c21-77#abc' } } }, 200, {});
    const families = r.snapshot().dynamodb.byFamily;
    // Two host items: 1 + 2 units (1,500 bytes), so 1.5 a unit each: where an item's size costs.
    assert.deepEqual(families[`${TABLE} PutItem host`], {
      writeRequestUnits: 3,
      readRequestUnits: 0,
      items: 2,
    });
    assert.deepEqual(families[`${TABLE} PutItem x`], { writeRequestUnits: 1, readRequestUnits: 0, items: 1 });
    assert.deepEqual(families[`${TABLE} PutItem bq`], {
      writeRequestUnits: 1,
      readRequestUnits: 0,
      items: 1,
    });
    assert.deepEqual(families['urls GetItem bq'], { writeRequestUnits: 0, readRequestUnits: 0.5, items: 1 });
    assert.equal(families['urls GetItem -']?.writeRequestUnits, 0);
  });
});

describe('partition key writes', () => {
  it('counts each key by its busiest second, items of one key together', () => {
    const clock = { ms: 10_000 };
    const r = recorder(clock);
    // Key "crawl": 3 items in second 10, 1 in second 11; key "other": 2 units in second 11.
    for (const sk of ['a', 'b', 'c']) r.dynamo('PutItem', put('crawl', sk), 200, {});
    clock.ms = 11_500;
    r.dynamo('UpdateItem', { TableName: TABLE, Key: { pk: { S: 'crawl' }, sk: { S: 'a' } } }, 200, {});
    r.dynamo('PutItem', put('other', 'a', 1500), 200, {});
    r.dynamo(
      'BatchWriteItem',
      {
        RequestItems: {
          [TABLE]: [
            { PutRequest: put('batch', 'a') },
            { DeleteRequest: { Key: { pk: { S: 'batch' }, sk: { S: 'b' } } } },
            { PutRequest: put('left', 'a') },
          ],
        },
      },
      200,
      { UnprocessedItems: { [TABLE]: [{ PutRequest: put('left', 'a') }] } },
    );
    assert.deepEqual(r.snapshot().dynamodb.hotKeys, [
      { table: TABLE, key: 'crawl', writeUnits: 4, peakPerSecond: 3 },
      { table: TABLE, key: 'other', writeUnits: 2, peakPerSecond: 2 },
      { table: TABLE, key: 'batch', writeUnits: 2, peakPerSecond: 2 },
    ]);
  });

  it(`lists the ${HOT_KEYS} busiest keys only, and forgets them on reset`, () => {
    const clock = { ms: 0 };
    const r = recorder(clock);
    for (let k = 0; k < HOT_KEYS + 5; k++) {
      for (let n = 0; n <= k; n++) r.dynamo('PutItem', put(`k${k}`, `s${n}`), 200, {});
    }
    const hot = r.snapshot().dynamodb.hotKeys;
    assert.equal(hot.length, HOT_KEYS);
    assert.equal(hot[0]?.key, `k${HOT_KEYS + 4}`);
    assert.equal(hot.at(-1)?.key, 'k5');
    r.reset();
    assert.deepEqual(r.snapshot().dynamodb.hotKeys, []);
  });
});
