import { withTransaction, type PgClient, type PgPool } from '../../../shared/clients/postgres.js';
import { ConflictError, NotFoundError, PaymentRequiredError } from '../../../shared/errors.js';
import { hasPrefix } from '../../../shared/ids.js';
import { Decimal } from '../../../shared/money/decimal.js';
import { appendEvents } from '../events/outbox-store.js';
import { invoicePaid } from '../invoices/events.js';
import { ChargeOutcomeUnknownError } from '../payments/processor.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { LIVE_CUSTOMERS, type BillingScope } from './scope.js';
import {
  type LockedInvoice,
  attemptRecord,
  defaultPaymentMethods,
  firstAttemptAfter,
  insertAttempts,
  latestAttemptRequiringAction,
  lockAccountInvoice,
  lockDueInvoices,
  lockedInvoice,
  markAttemptUnknown,
  settleAsPaidWithoutCharge,
} from './attempts-store.js';
import {
  applyOutcomes,
  completeAttempts,
  FAILURE_MESSAGES,
  keyOf,
  outcomeOf,
  type Attempt,
  type Charged,
  type FailureCode,
  type PaymentOutcome,
  settleAttempts,
} from './payment-outcomes.js';

/**
 * Payment attempts (docs/design.md §8 Invoice). Every attempt goes through three steps:
 *   1. in a transaction with the invoice locked: number the attempt (attempt_count + 1) and record it as
 *      `pending` with its idempotency key `<invoice id>:<attempt>` and payment method — committed BEFORE the
 *      processor is called;
 *   2. charge through the PaymentProcessor with that key;
 *   3. in a transaction: complete the attempt (only if still pending) and, in the same commit, the invoice
 *      (paid / next attempt / uncollectible) and its event (`invoice.paid` / `payment.failed`).
 * A crash between 1 and 3 leaves a pending attempt; the next run charges it again with the SAME key, which
 * the processor answers with the first charge, never a second one. Two runs completing the same attempt:
 * the guarded update in step 3 lets exactly one of them write the outcome and the event.
 */
export type PaymentDeps = Pick<BillingDeps, 'pg' | 'processor' | 'log' | 'hostedLinks'>;

/** Invoices handled per transaction pair. */
export const PAYMENT_BATCH = 1000;
/** Charges in flight at once. */
const CHARGE_CONCURRENCY = 256;

/** Every automatic attempt due at `now`, plus attempts a crash left pending. */
export async function attemptDuePayments(
  deps: BillingDeps,
  now: Date,
  opts: { timings?: BillingTimings; onBatch?: (done: PaymentOutcome[]) => void; scope?: BillingScope } = {},
): Promise<PaymentOutcome[]> {
  const scope = opts.scope ?? LIVE_CUSTOMERS;
  const seen: string[] = [];
  const out: PaymentOutcome[] = [];
  for (;;) {
    const begun = await timed(opts.timings, 'postgres_ms', () =>
      withTransaction(deps.pg, async (client) => {
        const due = await lockDueInvoices(client, now, seen, PAYMENT_BATCH, scope.clockId);
        if (due.length === 0) return null;
        return beginAttempts(client, due, now, false);
      }),
    );
    if (begun === null) break;
    const charged = await chargeAll(deps, begun.toCharge, opts.timings);
    // An attempt whose charge could not run stays pending: leave it to the next run instead of looping on it.
    // (Every other invoice of the batch is now paid or scheduled later, so no longer selected.)
    const done = new Set(charged.map((c) => c.attempt.invoice.id));
    seen.push(...begun.toCharge.filter((a) => !done.has(a.invoice.id)).map((a) => a.invoice.id));
    const completed = await timed(opts.timings, 'postgres_ms', () =>
      withTransaction(deps.pg, (client) => completeAttempts(client, charged, now, deps.hostedLinks)),
    );
    const batch = [...begun.completed, ...completed];
    out.push(...batch);
    opts.onBatch?.(batch);
  }
  return out;
}

/** The earliest automatic attempt planned after `after` for the scope's invoices (a test clock's next stop), or null. */
export async function nextPaymentAttemptDue(
  deps: Pick<BillingDeps, 'pg'>,
  after: Date,
  scope: BillingScope,
): Promise<Date | null> {
  return firstAttemptAfter(deps.pg, after, scope.clockId);
}

/**
 * POST /v1/billing/invoices/{id}/pay: one manual attempt now with the default payment method. Paid → the
 * outcome; declined → 402 with the failure code (the invoice keeps its status and schedule; attempt_count
 * and a `payment.failed` event record the attempt). Paid or void invoices → 409; no payment method → 402
 * `no_payment_method` without an attempt.
 */
export async function payInvoiceNow(
  deps: PaymentDeps,
  accountId: string,
  invoiceId: string,
  now: Date,
): Promise<PaymentOutcome> {
  const outcome = await attemptPaymentNow(deps, accountId, invoiceId, now);
  if (outcome.outcome === 'requires_action')
    throw new PaymentRequiredError(
      'authentication_required',
      `${FAILURE_MESSAGES.authentication_required} The invoice stays open until the customer completes it.`,
    );
  if (outcome.outcome === 'failed') {
    throw new PaymentRequiredError(
      outcome.failure_code!,
      `${FAILURE_MESSAGES[outcome.failure_code as FailureCode] ?? 'The payment failed.'} The invoice is unchanged.`,
    );
  }
  return outcome;
}

/**
 * One manual attempt now with the default payment method, its outcome returned whatever it is (payInvoiceNow turns
 * a failure into a 402). `attempt`: the attempt number the caller means to make (the hosted page's Pay form carries
 * it) — when the invoice already has that attempt (a double click, a refreshed form), its recorded outcome is
 * returned and nothing is charged again; one still pending is resumed with its own key, which the processor answers
 * with the first charge.
 */
export async function attemptPaymentNow(
  deps: PaymentDeps,
  accountId: string,
  invoiceId: string,
  now: Date,
  opts: { attempt?: number } = {},
): Promise<PaymentOutcome> {
  if (!hasPrefix(invoiceId, 'inv')) throw new NotFoundError(`No invoice ${invoiceId}.`);
  const begun = await withTransaction(deps.pg, async (client) => {
    // Lock first, then read: a request that waited for the lock must see the attempt the one before it recorded.
    // (Read in the locking statement, the joined attempt rows would be those of before the wait — and a second,
    // concurrent pay would number a new attempt and charge again.)
    if (!(await lockAccountInvoice(client, invoiceId, accountId))) throw new NotFoundError(`No invoice ${invoiceId}.`);
    const inv = (await lockedInvoice(client, invoiceId))!;
    if (inv.status === 'paid') throw new ConflictError(`Invoice ${invoiceId} is already paid.`, 'invoice_paid');
    if (inv.status === 'void') throw new ConflictError(`Invoice ${invoiceId} is void.`, 'invoice_void');
    if (inv.status === 'draft')
      throw new ConflictError(`Invoice ${invoiceId} is a draft: it is charged once finalized.`, 'invoice_draft');
    if (opts.attempt !== undefined && inv.pending_attempt === null && inv.attempt_count >= opts.attempt) {
      const made = await recordedAttempt(client, invoiceId, opts.attempt);
      if (made) return { replayed: made };
    }
    const begun = await beginAttempts(client, [inv], now, true);
    if (begun.toCharge.length === 0 && begun.completed.length === 0)
      throw new PaymentRequiredError(
        'no_payment_method',
        'The account has no default payment method: add a card first.',
      );
    return begun;
  });
  if ('replayed' in begun) return begun.replayed;
  // Nothing left to pay: settled without a charge.
  if (begun.toCharge.length === 0) return begun.completed[0]!;
  const [charged] = await chargeAll(deps, begun.toCharge);
  // The charge could not run (or its answer is unknown): the attempt stays open and is settled later, never redone.
  if (!charged)
    throw new ConflictError(
      `A payment of invoice ${invoiceId} is in progress: its outcome is not known yet. Retry in a moment.`,
      'invoice_payment_pending',
    );
  const completed = await withTransaction(deps.pg, (client) =>
    completeAttempts(client, [charged!], now, deps.hostedLinks),
  );
  return (
    completed[0] ?? {
      invoice_id: invoiceId,
      attempt: charged!.attempt.attempt,
      ...outcomeOf(charged!.result),
    }
  );
}

/** An attempt already made, as its outcome (a pending one: null — it is resumed instead). */
async function recordedAttempt(client: PgClient, invoiceId: string, attempt: number): Promise<PaymentOutcome | null> {
  const a = await attemptRecord(client, invoiceId, attempt);
  if (!a || a.status === 'pending' || a.status === 'unknown') return null;
  return {
    invoice_id: invoiceId,
    attempt,
    outcome: a.status as PaymentOutcome['outcome'],
    ...(a.failure_code ? { failure_code: a.failure_code } : {}),
  };
}

/** The invoice's latest attempt waiting for the customer (3-D Secure): its number and the processor's payment id. */
export async function attemptAwaitingCustomer(
  db: PgPool | PgClient,
  invoiceId: string,
): Promise<{ attempt: number; payment_id: string } | null> {
  const a = await latestAttemptRequiringAction(db, invoiceId);
  return a ? { attempt: a.attempt, payment_id: a.charge_id } : null;
}

/**
 * After the customer completed (or failed) the 3-D Secure challenge in the browser: the waiting attempt settled from
 * the processor's own record of its payment — as its webhook would, and whichever comes first wins (settleAttempts'
 * guard), so the invoice is paid once. Null when no attempt waits or the processor still has no outcome.
 */
export async function settleAttemptFromProcessor(
  deps: PaymentDeps,
  invoiceId: string,
  now: Date,
): Promise<PaymentOutcome | null> {
  const waiting = await attemptAwaitingCustomer(deps.pg, invoiceId);
  if (!waiting || !deps.processor.paymentInBrowser) return null;
  const { outcome } = await deps.processor.paymentInBrowser(waiting.payment_id);
  if (!outcome || outcome.status === 'requires_action') return null;
  const done = await withTransaction(deps.pg, (client) =>
    settleAttempts(client, [{ invoiceId, attempt: waiting.attempt, result: outcome }], now, deps.hostedLinks),
  );
  return done[0] ?? null;
}

/**
 * Step 1 for locked invoices: resume a pending attempt, or number a new one with the account's default
 * payment method. Without a method (and not manual) the attempt fails at once, completed in this transaction.
 */
async function beginAttempts(
  client: PgClient,
  invoices: LockedInvoice[],
  now: Date,
  manual: boolean,
): Promise<{ attempts: Attempt[]; toCharge: Attempt[]; completed: PaymentOutcome[] }> {
  const settled = await settleWithoutCharge(
    client,
    invoices.filter((i) => !owesSomething(i.amount_due)),
    now,
  );
  const toPay = invoices.filter((i) => owesSomething(i.amount_due));
  const fresh = toPay.filter((i) => i.pending_attempt === null);
  const pms = new Map<string, { id: string; processor_token: string }>();
  if (fresh.length) {
    const methods = await defaultPaymentMethods(client, [...new Set(fresh.map((i) => i.account_id))]);
    for (const row of methods) pms.set(row.account_id, { id: row.id, processor_token: row.processor_token });
  }
  const attempts: Attempt[] = toPay.map((inv) =>
    inv.pending_attempt !== null
      ? {
          invoice: inv,
          attempt: inv.pending_attempt,
          manual: inv.pending_manual!,
          pm: inv.pending_pm_id ? { id: inv.pending_pm_id, processor_token: inv.pending_pm_token! } : null,
        }
      : { invoice: inv, attempt: inv.attempt_count + 1, manual, pm: pms.get(inv.account_id) ?? null },
  );
  const newOnes = attempts.filter((a) => a.invoice.pending_attempt === null && (a.pm || !manual));
  if (newOnes.length) {
    await insertAttempts(
      client,
      newOnes.map((a) => a.invoice.id),
      newOnes.map((a) => a.attempt),
      newOnes.map((a) => a.pm?.id ?? null),
      newOnes.map(keyOf),
      manual,
      now,
    );
  }
  const noMethod = newOnes.filter((a) => !a.pm);
  const completed = noMethod.length
    ? await applyOutcomes(
        client,
        noMethod.map((attempt) => ({ attempt, result: { status: 'failed', failure_code: 'no_payment_method' } })),
        now,
      )
    : [];
  return { attempts, toCharge: attempts.filter((a) => a.pm), completed: [...settled, ...completed] };
}

/** THE rule of what the payment pass charges: an amount due above zero. Nothing is ever charged 0. */
export function owesSomething(amountDue: string): boolean {
  return new Decimal(amountDue).gt(0);
}

/**
 * Open invoices with nothing left to pay (amount due ≤ 0, e.g. written at 0 by an older release) are settled as
 * paid without a charge — as the close settles them at issue (close.ts finalStatus) — with `invoice.paid`. A
 * pending attempt on one charged nothing (a processor refuses a charge of 0): it is closed as failed,
 * `nothing_to_charge`, so no pass picks the invoice again.
 */
async function settleWithoutCharge(client: PgClient, invoices: LockedInvoice[], now: Date): Promise<PaymentOutcome[]> {
  if (invoices.length === 0) return [];
  const ids = invoices.map((i) => i.id);
  const paid = new Set(await settleAsPaidWithoutCharge(client, ids, now));
  const settled = invoices.filter((i) => paid.has(i.id));
  await appendEvents(
    client,
    settled.map((inv) => invoicePaid(inv, inv.status)),
  );
  return settled.map((inv) => ({ invoice_id: inv.id, attempt: inv.attempt_count, outcome: 'succeeded' as const }));
}

/** Step 2: the processor calls, a bounded number at a time. A thrown call stays pending for the next run. */
async function chargeAll(deps: PaymentDeps, attempts: Attempt[], timings?: BillingTimings): Promise<Charged[]> {
  return timed(timings, 'processor_ms', async () => {
    const out: Charged[] = [];
    let next = 0;
    const worker = async () => {
      while (next < attempts.length) {
        const a = attempts[next++]!;
        try {
          const result = await deps.processor.charge({
            paymentMethod: a.pm!,
            amount: a.invoice.amount_due,
            currency: a.invoice.currency,
            idempotencyKey: keyOf(a),
            accountId: a.invoice.account_id,
            invoiceId: a.invoice.id,
            attempt: a.attempt,
          });
          out.push({ attempt: a, result });
        } catch (err) {
          // The processor may have charged: `unknown` until reconciled from its record (reconcile.ts).
          if (err instanceof ChargeOutcomeUnknownError) await markUnknown(deps, a).catch(() => undefined);
          deps.log.error(
            { err, invoice_id: a.invoice.id, attempt: a.attempt },
            'charge failed to run; the attempt stays pending and is retried with the same key',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHARGE_CONCURRENCY, attempts.length) }, worker));
    return out;
  });
}

async function markUnknown(deps: PaymentDeps, a: Attempt): Promise<void> {
  await markAttemptUnknown(deps.pg, a.invoice.id, a.attempt);
}

/**
 * Step 3: completes the attempts still open (exactly one caller wins each), then applies them. Open = pending or
 * unknown; an attempt waiting for 3-D Secure may still succeed or fail, and a failed one whose PaymentIntent Stripe
 * later reports succeeded was paid after all (the money was taken). A transition already made is never made again.
 */
