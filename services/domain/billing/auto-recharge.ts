import { withTransaction } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { appendEvents } from '../events/outbox-store.js';
import { claimAutoRecharge, lowBalanceAlerts, walletsBelowThreshold } from '../credits/wallet-store.js';
import type { BillingScope } from './scope.js';
import { inScope } from './scope.js';
import { chargeTopUp, writeTopUp, type TopUpDeps } from './top-ups.js';

/**
 * The wallet step of the billing run (docs/credits.md "Auto-recharge and low-balance alert"), after the run's spends
 * (its invoices took their credit): `credit.balance_low` once per dip below a customer's low-balance threshold, and
 * for each customer whose balance is below its auto-recharge threshold, one top-up of the set amount — decided and
 * written under the settings' row lock (claimAutoRecharge: none in flight, the monthly cap, no failure waiting), so
 * concurrent runs buy once — then charged like any top-up. A failure shows on the settings and stops auto-recharge
 * until they are saved again.
 */
export async function rechargeWallets(deps: TopUpDeps, now: Date, scope: BillingScope): Promise<number> {
  const s = { condition: inScope, clockId: scope.clockId };
  await withTransaction(deps.pg, async (client) => appendEvents(client, await lowBalanceAlerts(client, now, s)));
  let bought = 0;
  for (const accountId of await walletsBelowThreshold(deps.pg, now, s)) {
    const invoiceId = await withTransaction(deps.pg, async (client) => {
      const due = await claimAutoRecharge(client, accountId, now);
      if (!due) return null;
      return writeTopUp(deps, client, { accountId, ...due, id: newId('ctu'), trigger: 'auto_recharge' }, now);
    }).catch((err: { code?: string }) => {
      // Another run's top-up went in flight between the claim and the insert (the partial unique index): theirs.
      if (err.code === '23505') return null;
      throw err;
    });
    if (!invoiceId) continue;
    await chargeTopUp(deps, accountId, invoiceId, now);
    bought++;
  }
  return bought;
}
