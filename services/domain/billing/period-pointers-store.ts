import type { PgClient } from '../../../shared/clients/postgres.js';
import type { Period } from '../subscriptions/periods.js';

/**
 * Moves each subscription's pointer to the next period it bills — `billing` (billing_period_start/_end: usage in
 * arrears) or `advance` (advance_period_start/_end: flat items in advance) — in the same transaction as the
 * invoices of the period it leaves. A canceled subscription has no period after the one it was canceled in: NULL.
 */
export async function moveToNextPeriods(
  client: PgClient,
  pointer: 'billing' | 'advance',
  ids: string[],
  next: Period[],
): Promise<void> {
  const [start, end] = [`${pointer}_period_start`, `${pointer}_period_end`];
  await client.query(
    `UPDATE subscriptions s SET ${start} = CASE WHEN s.canceled_at IS NOT NULL AND u.next >= s.canceled_at THEN NULL ELSE u.next END,
                                ${end} = CASE WHEN s.canceled_at IS NOT NULL AND u.next >= s.canceled_at THEN NULL ELSE u.next_end END
       FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS u(id, next, next_end) WHERE s.id = u.id`,
    [ids, next.map((p) => p.start), next.map((p) => p.end)],
  );
}
