import type { PgClient } from '../../../shared/clients/postgres.js';
import { recentThresholdInvoiceSubscriptions } from './issue-store.js';

/**
 * Threshold sanity (issue 49, docs/billing.md "Progressive billing"): at most one threshold invoice per subscription
 * within BILLING_THRESHOLD_INVOICE_SPACING_SECONDS — a tiny threshold otherwise issued, charged and emailed an
 * invoice at every pass. The amount due waits for the next invoice allowed (which bills it all) or the period's
 * close. Default spacing when the deps name none.
 */
export const DEFAULT_THRESHOLD_SPACING_SECONDS = 3600;

/** The subscriptions of `subs` without a threshold invoice issued in the `spacingSeconds` before `now`. */
export async function spacedOut<T extends { id: string }>(
  client: PgClient,
  subs: T[],
  now: Date,
  spacingSeconds: number,
): Promise<T[]> {
  if (subs.length === 0 || spacingSeconds <= 0) return subs;
  const recent = await recentThresholdInvoiceSubscriptions(
    client,
    subs.map((s) => s.id),
    now,
    spacingSeconds,
  );
  return subs.filter((s) => !recent.has(s.id));
}
