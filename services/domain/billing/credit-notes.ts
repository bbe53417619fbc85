import { withTransaction } from '../../../shared/clients/postgres.js';
import { ConflictError, ValidationError, type FieldError } from '../../../shared/errors.js';
import { newId } from '../../../shared/ids.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import { Decimal, canonicalDecimal, roundToMinorUnit } from '../../../shared/money/decimal.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { appendEvents, type NewEvent } from '../events/outbox-store.js';
import { invoicePaid } from '../invoices/events.js';
import type { CreditNoteWithLines, CreditRequest, NewCreditNote } from '../credit-notes/types.js';
import {
  completeRefund,
  creditNoteOfRequest,
  getCreditNote,
  insertCreditNote,
  linesToCredit,
  lockInvoiceToCredit,
  pendingRefunds,
  type CreditNoteToInsert,
  type InvoiceToCredit,
  type LineToCredit,
} from '../credit-notes/store.js';
import type { PaymentDeps } from './payments.js';
import type { BillingDeps } from './deps.js';
import { numberDocuments } from '../invoices/numbering.js';
import { shareOf, taxReversed } from '../tax/reverse.js';
import { attachedDiscounts } from './invoice-amounts.js';

/**
 * Credit notes (docs/design.md §8 Credit notes). An operator credits an invoice by an amount or per line:
 *   - unpaid (open, uncollectible): a `credit` note lowers what is owed (amount − amount_credited is what the next
 *     payment attempt charges); a note that leaves nothing owed settles the invoice as paid without a charge;
 *   - paid: a `refund` note pays the amount back through the processor, in three steps like a payment attempt —
 *     (1) the note is written with refund_status `pending` and committed, (2) the processor refunds with
 *     idempotency key `<credit note id>:refund`, (3) the answer is recorded (only if still pending). A crash between
 *     them leaves a pending note that a retried request (same Idempotency-Key) or the next billing run completes
 *     with the same key, which the processor answers with the first refund, never a second one. A refund the
 *     processor refuses gave nothing back: the note stays as a record (refund.status `failed`) and no longer counts.
 * Every note is taken under the invoice's row lock, so concurrent notes never add up to more than the invoice's
 * amount (the amount_credited CHECK is the last line of defence). A void invoice takes no note; nor does an
 * unpaid one while a payment attempt is in flight (its charge is for what was owed when it began).
 */

/** Pending refunds completed per billing run. */
const REFUND_BATCH = 1000;

/** Processor key of a note's refund: derived from the note, so every run of its refund is the same refund. */
export const refundKeyOf = (creditNoteId: string) => `${creditNoteId}:refund`;

type NoteLines = CreditNoteToInsert['lines'];

/**
 * THE rule of what a request credits: its lines (a plain amount is one line) and total, each exact in the
 * invoice currency's minor unit, each ≤ what is left of its invoice line, the total ≤ what is left of the invoice.
 * A line is credited at most its NET — its amount plus the discount attached to it (invoice-amounts.ts
 * attachedDiscounts) — plus the tax charged on that net. A quantity credits cumulatively: after crediting k of a
 * line's Q units, round(net × k / Q) of it is credited, so each piece is round(net × (before + q) / Q) −
 * round(net × before / Q) and the piece that credits the last units takes whatever is left of the line — the
 * pieces add up to the net exactly. Crediting a taxed line also reverses its tax in the same proportion
 * (services/domain/tax/reverse.ts, against the net): an exclusive rate's share is one more line of the note, on
 * the invoice's tax line (so the note's amount includes it); an inclusive rate's was inside the amount credited.
 * A tax line is not credited directly. A plain amount is taken as tax included: its share of the invoice's tax,
 * against the invoice's total BEFORE prepaid credit (what the tax was charged on), is reported in `tax`.
 * Throws ValidationError naming each field.
 */
export function creditLinesOf(
  invoice: Pick<InvoiceToCredit, 'currency' | 'amount' | 'amount_credited' | 'tax' | 'tax_credited'>,
  lines: LineToCredit[],
  credit: CreditRequest,
  reason: string,
): { lines: NoteLines; amount: string; tax: string } {
  const errors: FieldError[] = [];
  let code = 'validation_failed';
  const scale = minorUnits(invoice.currency);
  const inMinorUnits = (amount: string, field: string) => {
    if (new Decimal(amount).decimalPlaces() <= scale) return true;
    errors.push({ field, message: `must have at most ${scale} decimal places in ${invoice.currency}` });
    return false;
  };
  let out: NoteLines = [];
  let tax = new Decimal(0);
  // What this note credits so far, per invoice line (a request may name a line twice): amount and quantity.
  const inNote = new Map<number, Decimal>();
  const unitsInNote = new Map<number, Decimal>();
  const noted = (position: number) => inNote.get(position) ?? new Decimal(0);
  const note = (position: number, amount: Decimal) => inNote.set(position, noted(position).plus(amount));
  if (credit.kind === 'amount') {
    if (inMinorUnits(credit.amount, 'amount')) {
      out = [{ invoice_position: null, description: reason, quantity: null, amount: credit.amount }];
      // The tax was charged on the total before prepaid credit paid part of it: the share is taken against that.
      const charged = lines
        .filter((l) => l.type === 'credit')
        .reduce((s, l) => s.minus(l.amount), new Decimal(invoice.amount));
      const credited = new Decimal(invoice.amount_credited);
      const share = shareOf(invoice.tax, credited.plus(credit.amount), charged, invoice.currency).minus(
        shareOf(invoice.tax, credited, charged, invoice.currency),
      );
      tax = Decimal.max(0, Decimal.min(share, new Decimal(invoice.tax).minus(invoice.tax_credited)));
    }
  } else {
    const { discount } = attachedDiscounts(lines, invoice.currency);
    credit.lines.forEach((c, i) => {
      const line = lines[c.line];
      if (!line)
        return errors.push({
          field: `lines[${i}].line`,
          message: `the invoice has no line ${c.line} (it has ${lines.length})`,
        });
      if (line.type === 'tax')
        return errors.push({
          field: `lines[${i}].line`,
          message: `line ${c.line} is a tax line: tax is credited with the lines it taxes`,
        });
      const net = new Decimal(line.amount).plus(discount[c.line]!);
      const before = new Decimal(line.credited_amount).plus(noted(line.position));
      const left = net.minus(before);
      if (!left.gt(0)) {
        code = 'credit_exceeds_line';
        return errors.push({ field: `lines[${i}].line`, message: `line ${c.line} has nothing left to credit` });
      }
      let amount: Decimal;
      if (c.quantity !== undefined) {
        const units = new Decimal(line.quantity);
        const unitsBefore = new Decimal(line.credited_quantity).plus(unitsInNote.get(line.position) ?? 0);
        const quantityLeft = units.minus(unitsBefore);
        if (!units.gt(0))
          return errors.push({
            field: `lines[${i}].quantity`,
            message: `line ${c.line} has no quantity to credit: credit it by amount`,
          });
        if (new Decimal(c.quantity).gt(quantityLeft)) {
          code = 'credit_exceeds_line';
          return errors.push({
            field: `lines[${i}].quantity`,
            message: `must be at most ${canonicalDecimal(quantityLeft)}, the quantity of line ${c.line} not yet credited`,
          });
        }
        const share = (k: Decimal) => roundToMinorUnit(net.times(k).div(units), invoice.currency);
        const after = unitsBefore.plus(c.quantity);
        // The last units take what is left of the line: the pieces add up to its net exactly.
        amount = after.eq(units) ? left : Decimal.min(left, share(after).minus(share(unitsBefore)));
        if (!amount.gt(0))
          return errors.push({
            field: `lines[${i}].quantity`,
            message: `credits less than the smallest unit of ${invoice.currency}`,
          });
        unitsInNote.set(line.position, after.minus(line.credited_quantity));
      } else {
        if (!inMinorUnits(c.amount!, `lines[${i}].amount`)) return;
        amount = new Decimal(c.amount!);
      }
      if (amount.gt(left)) {
        code = 'credit_exceeds_line';
        return errors.push({
          field: `lines[${i}].${c.quantity !== undefined ? 'quantity' : 'amount'}`,
          message: `credits ${canonicalDecimal(amount)}, more than the ${canonicalDecimal(left)} of line ${c.line} not yet credited`,
        });
      }
      out.push({
        invoice_position: line.position,
        description: line.description,
        quantity: c.quantity ?? null,
        amount: canonicalDecimal(amount),
      });
      note(line.position, amount);
      for (const t of taxReversed(
        { amount: canonicalDecimal(net), taxes: line.taxes },
        before,
        amount,
        invoice.currency,
      )) {
        const taxLine = lines.find((l) => l.type === 'tax' && l.tax_rate_id === t.tax_rate_id);
        let reversed = new Decimal(t.amount);
        if (taxLine && !new Decimal(taxLine.amount).isZero()) {
          // An exclusive rate: money back, never more than is left of the tax line.
          const left = new Decimal(taxLine.amount).minus(taxLine.credited_amount).minus(noted(taxLine.position));
          reversed = Decimal.max(0, Decimal.min(reversed, left));
          if (reversed.isZero()) continue;
          note(taxLine.position, reversed);
          out.push({
            invoice_position: taxLine.position,
            tax_of_position: line.position,
            description: `${taxLine.description.replace(/ on [^ ]+$/, '')} on line ${line.position}`,
            quantity: null,
            amount: canonicalDecimal(reversed),
          });
        }
        tax = tax.plus(reversed);
      }
    });
  }
  if (errors.length) throw new ValidationError(errors, undefined, code);
  const total = out.reduce((s, l) => s.plus(l.amount), new Decimal(0));
  const left = new Decimal(invoice.amount).minus(invoice.amount_credited);
  if (total.gt(left)) {
    throw new ValidationError(
      [
        {
          field: credit.kind === 'amount' ? 'amount' : 'lines',
          message: `credits ${canonicalDecimal(total)}, more than the ${canonicalDecimal(Decimal.max(left, 0))} ${invoice.currency} of the invoice not yet credited`,
        },
      ],
      undefined,
      'credit_exceeds_invoice',
    );
  }
  return { lines: out, amount: canonicalDecimal(total), tax: canonicalDecimal(tax) };
}

/** POST /v1/billing/invoices/{id}/credit-notes: the note, its refund done (or left pending if the processor could not answer). */
export async function issueCreditNote(
  deps: PaymentDeps & Pick<BillingDeps, 'numberPrefix'>,
  req: NewCreditNote,
  now: Date,
): Promise<CreditNoteWithLines> {
  const note = await withTransaction(deps.pg, async (client) => {
    const invoice = await lockInvoiceToCredit(client, req.invoiceId);
    if (req.requestKey) {
      const earlier = await creditNoteOfRequest(client, invoice.id, req.requestKey);
      if (earlier) return earlier;
    }
    if (invoice.status === 'void')
      throw new ConflictError(`Invoice ${invoice.id} is void: there is nothing to credit.`, 'invoice_void');
    if (invoice.status === 'draft')
      throw new ConflictError(
        `Invoice ${invoice.id} is a draft: add or change its lines, or finalize it, instead of crediting it.`,
        'invoice_draft',
      );
    if (invoice.payment_pending)
      throw new ConflictError(
        `A payment attempt on invoice ${invoice.id} is in progress or its outcome not yet known; retry when it completed.`,
        'invoice_payment_pending',
      );
    const { lines, amount, tax } = creditLinesOf(
      invoice,
      await linesToCredit(client, invoice.id),
      req.credit,
      req.reason,
    );
    const type = invoice.status === 'paid' ? 'refund' : 'credit';
    if (type === 'refund' && !invoice.charge_id)
      throw new ConflictError(
        `Invoice ${invoice.id} was settled without a charge: there is nothing to refund.`,
        'invoice_not_charged',
      );
    const settle = type === 'credit' && new Decimal(invoice.amount_credited).plus(amount).eq(invoice.amount);
    const written = await insertCreditNote(
      client,
      { id: newId('cn'), invoice, type, amount, tax, reason: req.reason, requestKey: req.requestKey, lines },
      settle,
      now,
    );
    const events: NewEvent[] = [
      {
        accountId: invoice.account_id,
        type: 'credit_note.created',
        data: {
          credit_note_id: written.note.id,
          invoice_id: invoice.id,
          type,
          amount: new JsonDecimal(amount),
          currency: invoice.currency,
          reason: req.reason,
        },
      },
    ];
    if (settle) events.push(invoicePaid(invoice, invoice.status));
    await appendEvents(client, events);
    // Last: the gapless series' row lock is then held only for the commit.
    const [taken] = await numberDocuments(client, 'credit_notes', [written.note.id], deps.numberPrefix, now);
    return { ...written, note: { ...written.note, number: `${taken!.prefix}${taken!.number.padStart(6, '0')}` } };
  });
  if (note.note.refund_status !== 'pending') return note;
  await completePendingRefunds(deps, [note.note.id]);
  return getCreditNote(deps.pg, note.note.account_id, note.note.id);
}

/**
 * Steps 2 and 3 for pending refunds (`only`: these notes; else every one, for the billing run). A processor that
 * throws leaves the note pending for the next run. Returns the notes this call completed.
 */
export async function completePendingRefunds(deps: PaymentDeps, only?: string[]): Promise<string[]> {
  const pending = await pendingRefunds(deps.pg, REFUND_BATCH, only ?? null);
  const done: string[] = [];
  for (const p of pending) {
    try {
      const result = await deps.processor.refund({
        chargeId: p.charge_id,
        amount: p.amount,
        currency: p.currency,
        idempotencyKey: refundKeyOf(p.id),
      });
      if (await completeRefund(deps.pg, p.id, result)) done.push(p.id);
    } catch (err) {
      deps.log.error(
        { err, credit_note_id: p.id },
        'refund failed to run; the credit note stays pending and is retried with the same key',
      );
    }
  }
  return done;
}
