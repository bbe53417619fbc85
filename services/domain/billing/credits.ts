import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import { sumOfLines, type PricedInvoice, type PricedLine } from '../pricing/invoice-lines.js';
import { lockSpendableGrants, recordSpending, spendableGrants } from '../credits/spending-store.js';
import type { SpendableGrant } from '../credits/types.js';

/**
 * Prepaid credits applied to invoices (docs/design.md §8 Credits): at creation, before any charge, each invoice
 * with something to pay takes from its account's spendable grants in its currency, oldest-expiring first
 * (never-expiring last, then oldest granted), as one negative `credit` line; an invoice fully covered is 0
 * and so paid without a charge. The close transaction holds the grants' row locks from reading `remaining`
 * to writing it back, so concurrent billing runs spend each unit of credit once and never go below 0.
 */

// A grant as the credits area stores it; re-exported for billing's callers (upcoming, threshold checks, alerts).
export type { SpendableGrant };

export interface CreditToApply {
  invoice_id: string;
  account_id: string;
  priced: PricedInvoice;
}

export interface CreditUse {
  grant_id: string;
  invoice_id: string;
  amount: string;
}

/** Application order: soonest expiry first, grants without expiry last, then oldest granted, then id. */
function spendOrder(a: SpendableGrant, b: SpendableGrant): number {
  const ea = a.expires_at?.getTime() ?? Infinity;
  const eb = b.expires_at?.getTime() ?? Infinity;
  if (ea !== eb) return ea - eb;
  if (a.created_at.getTime() !== b.created_at.getTime()) return a.created_at.getTime() - b.created_at.getTime();
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * THE rule: spends `grants` (in place) on each invoice in turn, appending its `credit` line and lowering its
 * amount. Returns what each invoice took from which grant.
 */
export function allocateCredits(grants: SpendableGrant[], invoices: CreditToApply[]): CreditUse[] {
  const uses: CreditUse[] = [];
  const sorted = [...grants].sort(spendOrder);
  for (const inv of invoices) {
    let owed = new Decimal(inv.priced.amount);
    if (owed.lte(0)) continue;
    const taken: { grant: SpendableGrant; amount: Decimal }[] = [];
    for (const g of sorted) {
      if (owed.isZero()) break;
      if (g.account_id !== inv.account_id || g.currency !== inv.priced.currency) continue;
      const amount = Decimal.min(owed, g.remaining);
      if (amount.lte(0)) continue;
      g.remaining = canonicalDecimal(new Decimal(g.remaining).minus(amount));
      owed = owed.minus(amount);
      taken.push({ grant: g, amount });
      uses.push({ grant_id: g.id, invoice_id: inv.invoice_id, amount: canonicalDecimal(amount) });
    }
    if (taken.length === 0) continue;
    const total = taken.reduce((s, x) => s.plus(x.amount), new Decimal(0));
    const from = taken.map(
      (x) =>
        `${canonicalDecimal(x.amount)} of ${x.grant.id}${x.grant.expires_at ? ` (expires ${x.grant.expires_at.toISOString().slice(0, 10)})` : ''}`,
    );
    const line: PricedLine = {
      type: 'credit',
      product_id: null,
      meter_id: null,
      description: `Prepaid credit applied: ${from.join(', ')}`,
      quantity: '1',
      unit_price: canonicalDecimal(total.neg()),
      amount: canonicalDecimal(total.neg()),
      price_model: null,
      adjusts_invoice_id: null,
    };
    inv.priced.lines.push(line);
    inv.priced.amount = canonicalDecimal(sumOfLines(inv.priced.lines));
  }
  return uses;
}

/** Inside the close transaction: locks the accounts' spendable grants (in id order: no deadlock between runs) and allocates them. */
export async function lockAndAllocateCredits(
  client: PgClient,
  invoices: CreditToApply[],
  now: Date,
): Promise<CreditUse[]> {
  const accounts = invoices.filter((i) => new Decimal(i.priced.amount).gt(0)).map((i) => i.account_id);
  const grants = await lockCredits(client, accounts, now);
  if (grants.length === 0) return [];
  return allocateCredits(grants, invoices);
}

/** Locks the accounts' spendable grants (in id order: no deadlock between runs) until the transaction ends. */
export async function lockCredits(client: PgClient, accountIds: string[], now: Date): Promise<SpendableGrant[]> {
  const accounts = [...new Set(accountIds)];
  if (accounts.length === 0) return [];
  return lockSpendableGrants(client, accounts, now);
}

/** Writes the spent credit (of the invoices that were written) back to the locked grants and the ledger. */
export async function recordCreditUses(client: PgClient, uses: CreditUse[]): Promise<void> {
  if (uses.length === 0) return;
  await recordSpending(
    client,
    uses.map((u) => u.grant_id),
    uses.map((u) => u.invoice_id),
    uses.map((u) => u.amount),
  );
}

/** The upcoming invoice: the credit it would take now (nothing locked or spent). */
export async function previewCredits(
  pg: PgPool,
  accountId: string,
  priced: PricedInvoice,
  now: Date,
  pool?: SpendableGrant[],
): Promise<void> {
  const grants = pool ?? (await spendableCredits(pg, [accountId], now));
  allocateCredits(grants, [{ invoice_id: 'upcoming', account_id: accountId, priced }]);
}

/**
 * The accounts' unspent, unexpired credit grants, nothing locked: a pool that several upcoming invoices of one
 * customer spend in turn (previewCredits), so credit is counted once across them, as the period's close spends it.
 */
export async function spendableCredits(pg: PgPool, accountIds: string[], now: Date): Promise<SpendableGrant[]> {
  return spendableGrants(pg, accountIds, now);
}
