import type { InvoicePdfTask } from '../../workers/invoice-pdf.js';
import { formatGrouped } from '../../../shared/money/decimal.js';
import { pageMoney, type PayPanel } from '../../domain/hosted-pages/invoice-view.js';
import { amountDue } from '../../domain/invoices/types.js';
import { esc } from './templates.js';

/**
 * The hosted invoice page's body: the same document the PDF prints (seller, buyer, lines, tax, totals, status) and,
 * while the invoice can be paid, the Pay form that pay.js drives. Every value is escaped.
 */
const STATUS_LABEL: Record<string, string> = {
  open: 'Open',
  paid: 'Paid',
  uncollectible: 'Past due',
  void: 'Void',
  draft: 'Draft',
};

const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 10) : '');
const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map(esc)
    .join('<br>');

export function invoicePageBody(task: InvoicePdfTask, pay: PayPanel, stripeKey: string, pdfPath: string): string {
  const inv = task.invoice;
  const money = (a: string) => esc(pageMoney(a, inv.currency));
  const due = amountDue({ status: inv.status, amount: inv.amount, amount_credited: inv.amount_credited ?? '0' });
  const seller = task.seller;
  const c = task.customer;
  const address = task.legal_address
    ? [
        task.legal_address.line1,
        task.legal_address.line2 ?? '',
        `${task.legal_address.postal_code} ${task.legal_address.city}`,
        task.legal_address.region ?? '',
        task.legal_address.country,
      ].join('\n')
    : task.address
      ? [task.address.line1, `${task.address.city}, ${task.address.state} ${task.address.zip}`].join('\n')
      : '';
  const rows = task.lines
    .map(
      (l) => `<tr><td>${esc(l.description)}${l.detail ? `<div class="detail">${esc(l.detail)}</div>` : ''}</td>
<td class="num">${l.quantity === null ? '' : esc(formatGrouped(l.quantity))}</td>
<td class="num">${l.unit_price === null ? '' : money(l.unit_price)}</td><td class="num">${money(l.amount)}</td></tr>`,
    )
    .join('\n');
  return `<header class="doc-head">
<div class="seller" id="seller"><h1>${esc(seller?.name || 'Invoice')}</h1>
${seller?.address ? `<p>${lines(seller.address)}</p>` : ''}${(seller?.tax_ids ?? []).map((t) => `<p>Tax ID ${esc(t)}</p>`).join('')}</div>
<div class="meta"><p class="status ${esc(inv.status)}" id="invoice-status">${esc(STATUS_LABEL[inv.status] ?? inv.status)}</p>
<p>Invoice <strong id="invoice-number">${esc(inv.number ?? inv.id)}</strong></p>
<p>Issued ${esc(day(inv.created_at))}${inv.due_at ? ` · due ${esc(day(inv.due_at))}` : ''}</p>
<p>Period ${esc(inv.period_start)} – ${esc(inv.period_end)}</p></div>
</header>
<section class="buyer" id="buyer"><h2>Billed to</h2>
<p class="buyer-name">${esc(c.legal_name || c.name || '')}</p>
${c.legal_name && c.name && c.legal_name !== c.name ? `<p>${esc(c.name)}</p>` : ''}${c.reference ? `<p>Reference ${esc(c.reference)}</p>` : ''}
${address ? `<p>${lines(address)}</p>` : ''}${(c.tax_ids ?? []).map((t) => `<p>${esc(t.type)} ${esc(t.value)}</p>`).join('')}
</section>
<table class="lines" id="lines"><thead><tr><th>Description</th><th class="num">Quantity</th><th class="num">Unit price</th><th class="num">Amount</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<dl class="totals" id="totals">
${inv.subtotal !== undefined ? `<dt>Subtotal</dt><dd>${money(inv.subtotal)}</dd>` : ''}
${inv.tax !== undefined ? `<dt>Tax${inv.tax_exempt === 'reverse' ? ' (reverse charge)' : ''}</dt><dd id="tax">${money(inv.tax)}</dd>` : ''}
<dt>Total</dt><dd id="total">${money(inv.amount)}</dd>
${inv.amount_credited && inv.amount_credited !== '0' ? `<dt>Credited</dt><dd>−${money(inv.amount_credited)}</dd>` : ''}
<dt>Amount due</dt><dd id="amount-due">${money(due)}</dd>
</dl>
<p class="pdf"><a id="pdf-link" href="${esc(pdfPath)}">Download the PDF</a></p>
${inv.status === 'paid' ? `<p class="paid-note" id="paid-note">Paid${inv.paid_at ? ` on ${esc(day(inv.paid_at))}` : ''}. Thank you.</p>` : ''}
${pay.payable ? payForm(pay, stripeKey, money(due)) : ''}`;
}

function payForm(pay: PayPanel, stripeKey: string, due: string): string {
  const saved = pay.savedCard
    ? `<div class="saved"><button type="button" id="pay-saved" data-attempt="${pay.attempt}">${
        pay.awaitingAuthentication ? 'Authenticate and pay' : 'Pay'
      } ${due} with ${esc(pay.savedCard.brand)} •••• ${esc(pay.savedCard.last4)}</button>
${pay.awaitingAuthentication ? '<p class="note" id="awaiting-note">Your bank asks you to confirm this payment (3-D Secure).</p>' : ''}</div>`
    : '';
  const fresh = pay.newCard
    ? `<div class="new-card"><h3>${pay.savedCard ? 'Or pay with a new card' : 'Pay with a card'}</h3>
<div id="card-element" class="card-element"></div>
<button type="button" id="pay-new" data-attempt="${pay.newCardAttempt}">Pay ${due}</button>
<p class="note">The card is saved as your default card for later invoices. Its number goes to the payment processor only.</p></div>`
    : '';
  const none =
    !saved && !fresh
      ? '<p class="note" id="no-card">No card is on file. Contact the sender to pay this invoice.</p>'
      : '';
  return `<section class="pay" id="pay" data-stripe-key="${esc(pay.newCard ? stripeKey : '')}">
<h2>Pay this invoice</h2>
<p class="message" id="pay-message" role="status" aria-live="polite"></p>
${saved}${fresh}${none}
</section>`;
}
