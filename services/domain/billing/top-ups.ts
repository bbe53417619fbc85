import { withTransaction, type PgClient } from '../../../shared/clients/postgres.js';
import { ConflictError, NotFoundError, PaymentRequiredError } from '../../../shared/errors.js';
import { newId } from '../../../shared/ids.js';
import { appendEvents } from '../events/outbox-store.js';
import {
  customerOfAccount,
  failTopUps,
  getTopUp,
  hasDefaultPaymentMethod,
  insertTopUp,
  topUpByKey,
} from '../credits/top-ups-store.js';
import type { TopUpRow, TopUpTrigger } from '../credits/types.js';
import { isoDate } from './deductions.js';
import type { BillingDeps } from './deps.js';
import { issueInvoices } from './issue.js';
import { attemptPaymentNow } from './payments.js';

/**
 * Buying prepaid credit (docs/credits.md "Prepaid credit"): a top-up invoice — reason `top_up`, no subscription, one
 * line, the amount bought, no tax (credit is taxed when it pays an invoice: tax comes before prepaid credit, so taxing
 * the purchase too would tax the same sale twice) — issued like every invoice (issue.ts) and charged at once to the
 * default payment method through the processor (payments.ts: attempt recorded before the charge, its key
 * `<invoice>:<attempt>`). The grant is made in the transaction that marks the invoice paid, whoever learns it first —
 * this charge, a Stripe webhook, reconciliation, the hosted page after 3-D Secure — and only once
 * (credits/top-ups-store.ts grantPaidTopUps). A declined charge: the top-up `failed`, `credit.top_up.failed`, no
 * grant.
 */
export type TopUpDeps = Pick<BillingDeps, 'pg' | 'processor' | 'log' | 'numberPrefix' | 'hostedLinks'>;

export interface TopUpRequest {
  accountId: string;
  /** Exact decimal text, > 0, within the currency's minor units (the caller validated it). */
  amount: string;
  currency: string;
  /** The same key again returns the first top-up (a double click, a retried request) and charges nothing. */
  idempotencyKey?: string;
  trigger?: TopUpTrigger;
}

/**
 * Creates a top-up and charges it now. Returns the top-up as it is after the charge: paid (granted), failed, or
 * pending (3-D Secure asked, or the processor's answer not known yet: settled later by a webhook or the billing run).
 * No default payment method → 402 `no_payment_method`, nothing written.
 */
export async function createTopUp(deps: TopUpDeps, req: TopUpRequest, now = new Date()): Promise<TopUpRow> {
  const key = req.idempotencyKey ?? null;
  if (key) {
    const prior = await topUpByKey(deps.pg, req.accountId, key);
    if (prior) return prior;
  }
  const topUpId = newId('ctu');
  let invoiceId: string;
  try {
    invoiceId = await withTransaction(deps.pg, async (client) => {
      if (!(await hasDefaultPaymentMethod(client, req.accountId)))
        throw new PaymentRequiredError(
          'no_payment_method',
          'The customer has no default payment method: add a card before buying credit.',
        );
      return writeTopUp(deps, client, { ...req, id: topUpId, trigger: req.trigger ?? 'manual' }, now);
    });
  } catch (err) {
    // The same key raced in from another request: that one's top-up is this one.
    if (key && (err as { code?: string }).code === '23505') {
      const prior = await topUpByKey(deps.pg, req.accountId, key);
      if (prior) return prior;
    }
    throw err;
  }
  await chargeTopUp(deps, req.accountId, invoiceId, now);
  return getTopUp(deps.pg, req.accountId, topUpId);
}

/**
 * Writes a top-up and its invoice in the caller's transaction (issued like every invoice: issue.ts); returns the
 * invoice's id, to charge once committed (chargeTopUp).
 */
export async function writeTopUp(
  deps: TopUpDeps,
  client: PgClient,
  t: TopUpRequest & { id: string; trigger: TopUpTrigger },
  now: Date,
): Promise<string> {
  const customerId = await customerOfAccount(client, t.accountId);
  if (!customerId) throw new NotFoundError(`No customer ${t.accountId}.`);
  const invoiceId = newId('inv');
  const today = isoDate(now.getTime());
  await issueInvoices(
    deps,
    client,
    'top_up',
    [
      {
        id: invoiceId,
        account_id: t.accountId,
        customer_id: customerId,
        subscription_id: null,
        status: 'open',
        currency: t.currency,
        amount: t.amount,
        subtotal: t.amount,
        tax: '0',
        tax_exempt: 'none',
        period_start: today,
        period_end: today,
        due_at: now,
        first_attempt: now,
        threshold_seq: null,
        priced: { currency: t.currency, amount: t.amount, lines: [topUpLine(t.amount, t.currency)] },
      },
    ],
    now,
    { creditUses: [] },
  );
  await insertTopUp(
    client,
    {
      id: t.id,
      accountId: t.accountId,
      invoiceId,
      currency: t.currency,
      amount: t.amount,
      trigger: t.trigger,
      idempotencyKey: t.idempotencyKey ?? null,
    },
    now,
  );
  return invoiceId;
}

/** The charge of a new top-up's invoice; an outcome not known yet leaves it pending, settled later, never redone. */
export async function chargeTopUp(deps: TopUpDeps, accountId: string, invoiceId: string, now: Date): Promise<void> {
  try {
    await attemptPaymentNow(deps, accountId, invoiceId, now);
  } catch (err) {
    if (err instanceof ConflictError && err.code === 'invoice_payment_pending') return;
    if (err instanceof PaymentRequiredError && err.code === 'no_payment_method') {
      // The card was removed between the check and the charge: the top-up fails as a declined one does.
      await withTransaction(deps.pg, async (client) =>
        appendEvents(client, await failTopUps(client, [{ invoiceId, failureCode: 'no_payment_method' }], now)),
      );
      return;
    }
    throw err;
  }
}

function topUpLine(amount: string, currency: string) {
  return {
    type: 'one_off' as const,
    product_id: null,
    meter_id: null,
    description: `Prepaid credit (${currency})`,
    quantity: '1',
    unit_price: amount,
    amount,
    price_model: null,
    adjusts_invoice_id: null,
  };
}
