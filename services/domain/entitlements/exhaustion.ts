import type { ClickHouseClient } from '@clickhouse/client';
import { withTransaction, type PgPool } from '../../../shared/clients/postgres.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { appendEvent } from '../events/outbox-store.js';
import { accountUsage } from '../usage/account-usage.js';
import { meteredAccess, termsOf } from './access.js';
import { usageTargetOf } from './usage-reads.js';
import { loadEntitlements } from './store.js';
import { insertExhaustion, recordedExhaustions, setExhaustionEvent } from './exhaustions-store.js';
import type { GrantRow } from './types.js';

/**
 * One pass of the exhaustion evaluator (docs/entitlements.md): every metered `block` entitlement whose usage
 * reached its period's limit (the check's own rule, meteredAccess, over the same usage read) gets ONE
 * `entitlement.exhausted` event per period — the row in entitlement_exhaustions is inserted in the transaction
 * that appends the event, and a second evaluator (or a re-run after a crash) finds it and appends nothing.
 * Returns the number of events appended.
 */
export async function emitExhaustions(
  pg: PgPool,
  ch: ClickHouseClient,
  database: string,
  nowMs = Date.now(),
): Promise<number> {
  const { entitlements, grants } = await loadEntitlements(pg, true);
  const metered = entitlements.filter((e) => e.meter_type !== null);
  if (!metered.length) return 0;
  const grantsOf = new Map<string, GrantRow[]>();
  for (const g of grants) grantsOf.set(g.entitlement_id, [...(grantsOf.get(g.entitlement_id) ?? []), g]);
  const nowOf = (e: (typeof metered)[number]) => e.clock_time ?? new Date(nowMs);
  const usage = await accountUsage(
    ch,
    database,
    metered.map((e) => usageTargetOf(e, nowOf(e))),
  );
  const exhausted = metered
    .map((e, i) => ({ e, access: meteredAccess(termsOf(e), grantsOf.get(e.id) ?? [], usage[i]!, nowOf(e)) }))
    .filter(({ access }) => !access.has_access);
  if (!exhausted.length) return 0;
  const done = await recordedExhaustions(
    pg,
    exhausted.map(({ e }) => e.id),
  );
  const seen = new Set(done.map((r) => `${r.entitlement_id}@${r.period_start.getTime()}`));
  let emitted = 0;
  for (const { e, access } of exhausted) {
    if (seen.has(`${e.id}@${access.period_start!.getTime()}`)) continue;
    const appended = await withTransaction(pg, async (c) => {
      if (!(await insertExhaustion(c, e.id, access.period_start!))) return false;
      const eventId = await appendEvent(c, {
        accountId: e.account_id,
        type: 'entitlement.exhausted',
        data: {
          entitlement_id: e.id,
          feature: e.feature,
          usage: new JsonDecimal(access.usage!),
          limit: new JsonDecimal(access.limit!),
          period_start: access.period_start!.toISOString(),
        },
      });
      await setExhaustionEvent(c, e.id, access.period_start!, eventId);
      return true;
    });
    if (appended) emitted++;
  }
  return emitted;
}
