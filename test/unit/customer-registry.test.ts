import t from 'tap';
import { CompactKeyIndex, MAX_SLOTS } from '../../shared/customers/key-index.js';
import { CustomerTable } from '../../shared/customers/table.js';
import { decodeShard, encodeShard, shardKey, shardOfKey, type CustomerEntry } from '../../shared/customers/shards.js';
import { Attribution } from '../../shared/customers/attribution.js';
import type { FieldError } from '../../shared/errors.js';
import type { MeterRecord } from '../../shared/meters/record.js';
import { newId } from '../../shared/ids.js';

t.test('CompactKeyIndex: every key found, deletions keep probe runs whole, odd keys in the fallback map', async (t) => {
  const index = new CompactKeyIndex();
  const keys = Array.from({ length: 20_000 }, (_, i) => `customer-${i}`);
  keys.forEach((k, slot) => index.set(k, slot));
  t.equal(index.size, keys.length);
  t.ok(
    keys.every((k, slot) => index.get(k) === slot),
    'all found',
  );
  // Delete every third slot: the rest must still be found (backward-shift deletion moved them correctly).
  for (let slot = 0; slot < keys.length; slot += 3) index.deleteSlot(slot);
  t.ok(
    keys.every((k, slot) => index.get(k) === (slot % 3 === 0 ? undefined : slot)),
    'after deletions',
  );
  // Slots reused with new keys (the pool compacts as garbage accumulates).
  for (let slot = 0; slot < keys.length; slot += 3) index.set(`again-${slot}`, slot);
  t.equal(index.get('again-300'), 300);
  t.equal(index.get('customer-301'), 301);
  index.set('ü-ñ 日本', 7); // not ASCII
  t.equal(index.get('ü-ñ 日本'), 7);
  t.equal(index.get('customer-7'), undefined, 'slot 7 lost its previous key');
  index.set('x'.repeat(300), 8); // longer than 255
  t.equal(index.get('x'.repeat(300)), 8);
  index.set('customer-10', 9); // a key moves to another slot
  t.equal(index.get('customer-10'), 9);
  t.ok(index.slotHas(9, 'customer-10') && !index.slotHas(10, 'customer-10'));
  index.deleteSlot(7);
  t.equal(index.get('ü-ñ 日本'), undefined);
  t.equal(index.get(''), undefined);
});

t.test('CompactKeyIndex: keys of every length, sharing prefixes, told apart by their words and length', async (t) => {
  const index = new CompactKeyIndex();
  // Lengths 1…255 (every padding of the last word), each a prefix of the next: only the length and the tail differ.
  const prefixes = Array.from({ length: 255 }, (_, i) => 'p'.repeat(i + 1));
  prefixes.forEach((k, slot) => index.set(k, slot));
  // Keys differing in one character at every position of a word.
  const near = Array.from({ length: 40 }, (_, i) => `cust-${'0'.repeat(i % 8)}${i}`);
  near.forEach((k, i) => index.set(k, 1_000 + i));
  t.ok(
    prefixes.every((k, slot) => index.get(k) === slot),
    'every length found',
  );
  t.ok(
    near.every((k, i) => index.get(k) === 1_000 + i),
    'near keys found',
  );
  t.equal(index.get('p'.repeat(256)), undefined, 'longer than any key');
  t.equal(index.get('pp\u0000'), undefined, 'a NUL is not padding');
  t.equal(index.get('cust-'), undefined);
  t.equal(index.get('cust-0'), 1_000);
  // Churn: the pool compacts many times; every live key stays found, every dropped one is gone.
  for (let round = 0; round < 20; round++)
    for (let slot = 0; slot < 255; slot += 2) index.set(`r${round}-${slot}`, slot);
  t.ok(
    prefixes.every((k, slot) => index.get(k) === (slot % 2 ? slot : undefined)),
    'after churn',
  );
  t.equal(index.get('r19-254'), 254);
  t.equal(index.get('r18-254'), undefined);
  t.throws(() => index.set('too-far', MAX_SLOTS), RangeError);
});

t.test('CustomerTable: a shard entry makes the shard exactly its customers', async (t) => {
  const table = new CustomerTable();
  const a: CustomerEntry = { accountId: newId('acct'), customerId: newId('cus'), externalId: 'acme' };
  const b: CustomerEntry = { accountId: newId('acct'), customerId: 'cus_made-elsewhere', externalId: null };
  table.applyShard(5, [a, b]);
  t.equal(table.size, 2);
  t.equal(table.accountOfExternalId('acme'), a.accountId);
  t.equal(table.accountOfCustomerId(a.customerId), a.accountId);
  t.equal(table.accountOfCustomerId(b.customerId), b.accountId, 'an id of another shape');
  // a's external id changes, b gets one, c is new.
  const c: CustomerEntry = { accountId: newId('acct'), customerId: newId('cus'), externalId: 'acme' };
  table.applyShard(5, [
    { ...a, externalId: 'acme-2' },
    { ...b, externalId: 'bee' },
  ]);
  table.applyShard(9, [c]);
  t.equal(table.accountOfExternalId('acme'), c.accountId, 'the old external id now names c');
  t.equal(table.accountOfExternalId('acme-2'), a.accountId);
  t.equal(table.accountOfExternalId('bee'), b.accountId);
  t.equal(table.size, 3);
  table.applyShard(5, [b]); // a is gone (a repaired ghost)
  t.equal(table.accountOfCustomerId(a.customerId), undefined);
  t.equal(table.accountOfExternalId('acme-2'), undefined);
  t.equal(table.size, 2);
  table.applyShard(9, []);
  t.equal(table.accountOfExternalId('acme'), undefined);
  t.equal(table.size, 1);
});

t.test('shard entries: one text per content, decoded back; keys name shards', async (t) => {
  const entries: CustomerEntry[] = [
    { accountId: 'acct_b', customerId: 'cus_b', externalId: null },
    { accountId: 'acct_a', customerId: 'cus_a', externalId: 'x"y' },
  ];
  const text = encodeShard(entries);
  t.equal(text, encodeShard([...entries].reverse()), 'sorted: the same customers encode the same');
  t.same(decodeShard(text), [...entries].reverse());
  t.equal(decodeShard('{'), undefined);
  t.equal(decodeShard('[[1, "cus"]]'), undefined);
  t.equal(shardKey(0x0a3f), 's0a3f');
  t.equal(shardOfKey('s0a3f'), 0x0a3f);
  t.equal(shardOfKey('s0A3F'), undefined);
  t.equal(shardOfKey('sxyz1'), undefined);
});

t.test('Attribution: whose record it is, for every kind of token and meter', async (t) => {
  const table = new CustomerTable();
  const acme: CustomerEntry = { accountId: 'acct_acme', customerId: newId('cus'), externalId: 'acme' };
  const bolt: CustomerEntry = { accountId: 'acct_bolt', customerId: newId('cus'), externalId: 'bolt' };
  table.applyShard(1, [acme, bolt]);
  let checks = 0;
  const lookup = { table, assertCurrent: () => void checks++ };
  const deployment = { id: 'mtr_d', account_id: 'acct_op', scope: 'deployment' } as MeterRecord;
  const own = { id: 'mtr_o', account_id: 'acct_op' } as MeterRecord;
  const run = (operator: boolean, accountId: string, meter: MeterRecord, r: object) => {
    const errors: FieldError[] = [];
    const attribution = new Attribution({ accountId, operator }, lookup);
    const account = attribution.accountOf(r, meter, errors);
    return { account, errors, forOthers: attribution.forOthers, slot: attribution.slot };
  };
  // The slot of the customer found (its rate bucket's key in takeEach), -1 when none was looked up.
  t.equal(run(true, 'acct_op', deployment, { customer: 'acme' }).slot, table.slotOfExternalId('acme'));
  t.equal(table.accountAt(table.slotOfCustomerId(bolt.customerId)!), 'acct_bolt');
  t.equal(run(true, 'acct_op', deployment, { customer_id: bolt.customerId }).slot, table.slotOfExternalId('bolt'));
  t.equal(run(false, 'acct_acme', deployment, {}).slot, -1);
  t.equal(run(true, 'acct_op', own, {}).slot, -1);
  t.match(run(true, 'acct_op', deployment, { customer: 'acme' }), {
    account: 'acct_acme',
    errors: [],
    forOthers: true,
  });
  t.match(run(true, 'acct_op', deployment, { customer_id: bolt.customerId }), { account: 'acct_bolt' });
  t.match(run(true, 'acct_op', deployment, {}), { account: undefined, errors: [{ field: 'customer' }] });
  t.match(run(true, 'acct_op', deployment, { customer: 'nobody' }), {
    errors: [{ field: 'customer', message: 'names no customer of this deployment' }],
  });
  t.match(run(true, 'acct_op', deployment, { customer: 'acme', customer_id: acme.customerId }), {
    errors: [{ field: 'customer' }],
  });
  t.match(run(false, 'acct_acme', deployment, {}), { account: 'acct_acme', errors: [], forOthers: false });
  t.match(run(false, 'acct_acme', deployment, { customer: 'acme' }), { account: 'acct_acme', forOthers: false });
  const other = run(false, 'acct_acme', deployment, { customer: 'bolt' });
  const unknown = run(false, 'acct_acme', deployment, { customer: 'nobody' });
  t.match(other, { account: undefined, errors: [{ field: 'customer', message: 'must be this token’s own customer' }] });
  t.same(other.errors, unknown.errors, 'another customer reads exactly like an unknown one');
  t.match(run(true, 'acct_op', own, {}), { account: 'acct_op', errors: [] });
  t.match(run(true, 'acct_op', own, { customer_id: acme.customerId }), { errors: [{ field: 'customer_id' }] });
  const before = checks;
  const many = new Attribution({ accountId: 'acct_op', operator: true }, lookup);
  for (let i = 0; i < 10; i++) many.accountOf({ customer: 'acme' }, deployment, []);
  t.equal(checks - before, 1, 'the registry’s currency is checked once per request');
});
