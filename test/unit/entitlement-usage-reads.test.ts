import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { meteredAccess, termsOf } from '../../services/domain/entitlements/access.js';
import type { LoadedEntitlement } from '../../services/domain/entitlements/store.js';
import { meteredEntries, mustReadUsage, type Entry } from '../../services/domain/entitlements/usage-reads.js';
import { parseUsageMoved, usageMovedMessages } from '../../services/domain/usage/usage-moved.js';

/**
 * Which metered entitlements a refresh pass of the api's table reads (docs/entitlements.md "How the check is
 * answered from memory"): only the accounts signalled as moved — except a full read, a new period, nothing read
 * yet, a test clock — and the signal's message format.
 */
const at = (s: string) => new Date(s);
const NOW = at('2026-03-10T12:00:00Z').getTime();

function row(account: string, over: Partial<LoadedEntitlement> = {}): LoadedEntitlement {
  return {
    id: `ent_${account}`,
    account_id: account,
    customer_id: `cus_${account}`,
    feature: 'calls',
    type: 'metered',
    meter_id: 'mtr_1',
    limit: '1000',
    period: 'month',
    overage: 'block',
    dimension_key: null,
    dimension_value: null,
    created_at: at('2026-01-01T00:00:00Z'),
    updated_at: at('2026-01-01T00:00:00Z'),
    external_id: null,
    clock_time: null,
    meter_type: 'sum',
    aggregation: 'sum',
    unique_by: null,
    ...over,
  };
}

/** An entry holding `usage` read during March 2026 (or nothing read yet). */
function entry(account: string, usage: string | undefined, over: Partial<LoadedEntitlement> = {}): Entry {
  const r = row(account, over);
  if (usage === undefined) return { row: r, grants: [] };
  const access = meteredAccess(termsOf(r), [], new Decimal(usage), new Date(NOW));
  return {
    row: r,
    grants: [],
    state: { periodStartMs: access.period_start!.getTime(), periodEndMs: access.period_end!.getTime(), access },
  };
}

t.test('between full reads only the signalled accounts are read', async (t) => {
  const moved = new Set(['acc_a']);
  t.ok(mustReadUsage(entry('acc_a', '5'), moved, NOW), 'a moved account');
  t.notOk(mustReadUsage(entry('acc_b', '5'), moved, NOW), 'an account that did not move keeps its answer');
  t.notOk(mustReadUsage(entry('acc_b', '5'), new Set(), NOW), 'nothing moved: nothing read');
});

t.test('a full read reads every metered entry', async (t) => {
  t.ok(mustReadUsage(entry('acc_b', '5'), undefined, NOW));
});

t.test('read whatever the signal says: nothing read yet, a new period, a test clock', async (t) => {
  const none = new Set<string>();
  t.ok(mustReadUsage(entry('acc_b', undefined), none, NOW), 'nothing read yet (a new entitlement)');
  t.ok(mustReadUsage(entry('acc_b', '5'), none, at('2026-04-01T00:00:00Z').getTime()), 'April began: March held');
  t.notOk(mustReadUsage(entry('acc_b', '5'), none, at('2026-03-31T23:59:59.999Z').getTime()), 'still March');
  t.ok(mustReadUsage(entry('acc_b', '5', { clock_time: new Date(NOW) }), none, NOW), 'a test clock moves alone');
});

t.test('the metered entries are those with a meter', async (t) => {
  const boolean = entry('acc_c', undefined, { type: 'boolean', meter_id: null, meter_type: null });
  const a = entry('acc_a', '1');
  const b = entry('acc_b', '2');
  const table = [
    new Map([['calls', a]]),
    new Map([
      ['calls', b],
      ['sso', boolean],
    ]),
  ];
  t.same([...meteredEntries(table)], [a, b]);
});

t.test('signal messages: deduplicated ids, newline-separated, split under the size cap', async (t) => {
  t.same(usageMovedMessages(['acc_a', 'acc_b']), ['acc_a\nacc_b']);
  const ids = Array.from({ length: 10 }, (_, i) => `acc_${String(i).padStart(4, '0')}`); // 8 chars + newline each
  const parts = usageMovedMessages(ids, 30);
  t.same(parts, [ids.slice(0, 3).join('\n'), ids.slice(3, 6).join('\n'), ids.slice(6, 9).join('\n'), ids[9]]);
  t.ok(
    parts.every((p) => p.length <= 30),
    'each under the cap',
  );
  t.same(parts.flatMap(parseUsageMoved), ids, 'read back in full');
  t.same(parseUsageMoved(''), [], 'an empty message names no one');
});
