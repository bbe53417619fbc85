import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { grantsInPeriod, meteredAccess } from '../../services/domain/entitlements/access.js';
import { entitlementPeriod } from '../../services/domain/entitlements/periods.js';
import type { GrantRow } from '../../services/domain/entitlements/types.js';

/** The one rule of a metered entitlement (docs/entitlements.md): periods, grants, balance and access. */
const at = (s: string) => new Date(s);
const grant = (amount: string, grantedAt: string, expiresAt: string | null = null): GrantRow => ({
  id: 'entg_x',
  entitlement_id: 'ent_x',
  amount,
  granted_at: at(grantedAt),
  expires_at: expiresAt === null ? null : at(expiresAt),
  created_at: at(grantedAt),
});

t.test('periods: the UTC day, the calendar month; billing_period follows billing (calendar months)', async (t) => {
  const now = at('2026-02-28T23:59:59.999Z');
  const iso = (p: { start: Date; end: Date }) => [p.start.toISOString(), p.end.toISOString()];
  t.same(iso(entitlementPeriod('day', now)), ['2026-02-28T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
  t.same(iso(entitlementPeriod('month', now)), ['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
  t.same(iso(entitlementPeriod('billing_period', now)), iso(entitlementPeriod('month', now)));
  t.same(iso(entitlementPeriod('month', at('2026-12-31T12:00:00Z'))), [
    '2026-12-01T00:00:00.000Z',
    '2027-01-01T00:00:00.000Z',
  ]);
});

t.test('grants count in the period they were made in, until they expire', async (t) => {
  const now = at('2026-03-10T12:00:00Z');
  const period = entitlementPeriod('month', now);
  const grants = [
    grant('500', '2026-03-02T00:00:00Z'),
    grant('7', '2026-02-27T00:00:00Z'), // last month's: never carried over
    grant('3', '2026-03-05T00:00:00Z', '2026-03-09T00:00:00Z'), // expired
    grant('0.25', '2026-03-10T11:00:00Z', '2026-03-11T00:00:00Z'),
  ];
  t.equal(grantsInPeriod(grants, period, now).toFixed(), '500.25');
});

t.test('block: access while usage < limit + grants; allow: always; balance exact and negative past it', async (t) => {
  const now = at('2026-03-10T12:00:00Z');
  const terms = { limit: '1000', period: 'month' as const, overage: 'block' as const };
  const check = (usage: string, grants: GrantRow[] = [], overage: 'block' | 'allow' = 'block') => {
    const a = meteredAccess({ ...terms, overage }, grants, new Decimal(usage), now);
    return [a.has_access, a.limit!.toFixed(), a.balance!.toFixed()];
  };
  t.same(check('999'), [true, '1000', '1']);
  t.same(check('1000'), [false, '1000', '0']);
  t.same(check('1001'), [false, '1000', '-1']);
  t.same(check('1001', [grant('500', '2026-03-10T00:00:00Z')]), [true, '1500', '499']);
  t.same(check('1001', [], 'allow'), [true, '1000', '-1']);
  t.same(check('999.999999999'), [true, '1000', '0.000000001']);
});
