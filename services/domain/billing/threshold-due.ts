import { Decimal } from '../../../shared/money/decimal.js';
import type { PricedInvoice } from '../pricing/invoice-lines.js';
import { allocateCredits, type CreditUse, type SpendableGrant } from './credits.js';

/** A running period checked against its billing threshold (priced, deducted, taxed; no credit applied yet). */
export interface ThresholdCandidate {
  invoice_id: string;
  account_id: string;
  priced: PricedInvoice;
  threshold: string;
}

/**
 * THE rule of which running periods a threshold pass bills, and with how much prepaid credit (docs/billing.md
 * "Progressive billing"). The candidates are taken in turn; each is tried with the credit the invoices issued before
 * it in the pass left over, and only one whose amount due after that credit reaches its threshold (> 0) is issued
 * and spends it. So every invoice is issued at exactly the amount it was checked at — never at 0 — and credit a
 * candidate below its threshold would have taken stays for the next one (before, the pass tried the credit across
 * every candidate, then issued each due one alone: credit 200, A 150 below its threshold, B 120 over its threshold
 * of 50 after A's share → B issued at 0, open, charged 0 on every payment pass).
 * `grants` are spent in place; each due candidate's `priced` gets its credit line. Returns the due ones' flags and
 * the credit they took.
 */
export function thresholdInvoicesDue(
  grants: SpendableGrant[],
  candidates: ThresholdCandidate[],
): { due: boolean[]; uses: CreditUse[] } {
  const due: boolean[] = [];
  const uses: CreditUse[] = [];
  for (const c of candidates) {
    const tried = grants.map((g) => ({ ...g }));
    const priced = { ...c.priced, lines: [...c.priced.lines] };
    const taken = allocateCredits(tried, [{ invoice_id: c.invoice_id, account_id: c.account_id, priced }]);
    const amount = new Decimal(priced.amount);
    const isDue = amount.gt(0) && amount.gte(c.threshold);
    due.push(isDue);
    if (!isDue) continue;
    for (const [i, g] of tried.entries()) grants[i]!.remaining = g.remaining;
    c.priced.lines = priced.lines;
    c.priced.amount = priced.amount;
    uses.push(...taken);
  }
  return { due, uses };
}
