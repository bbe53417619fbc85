import type { InvoicePdfTask } from '../../workers/invoice-pdf.js';
import type { PayPanel } from '../../domain/hosted-pages/invoice-view.js';
import { PAGE_LABELS } from '../../domain/hosted-pages/page-texts.js';
import { invoiceTexts, type Locale } from '../../domain/invoices/invoice-texts.js';
import { DECLINE_LABELS } from '../../domain/payments/decline-texts.js';
import { amountDue } from '../../domain/invoices/types.js';
import { esc } from './templates.js';

/**
 * The hosted invoice page's body: the same document the PDF prints (seller, buyer, lines, tax, totals, status) and,
 * while the invoice can be paid, the Pay form that pay.js drives — in the customer's locale (the texts of
 * services/domain/hosted-pages/page-texts.ts, amounts and dates as services/domain/invoices/invoice-texts.ts formats
 * them). Every value is escaped.
 */
const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map(esc)
    .join('<br>');

export function invoicePageBody(task: InvoicePdfTask, pay: PayPanel, stripeKey: string, pdfPath: string): string {
  const t = invoiceTexts(task.locale);
  const l = PAGE_LABELS[t.locale];
  const inv = task.invoice;
  const money = (a: string) => esc(t.money(a, inv.currency));
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
      (x) => `<tr><td>${esc(x.description)}${x.detail ? `<div class="detail">${esc(x.detail)}</div>` : ''}</td>
<td class="num">${x.quantity === null ? '' : esc(t.quantity(x.quantity))}</td>
<td class="num">${x.unit_price === null ? '' : money(x.unit_price)}</td><td class="num">${money(x.amount)}</td></tr>`,
    )
    .join('\n');
  return `<header class="doc-head">
<div class="seller" id="seller"><h1>${esc(seller?.name || l.invoice)}</h1>
${seller?.address ? `<p>${lines(seller.address)}</p>` : ''}${(seller?.tax_ids ?? []).map((x) => `<p>${esc(l.taxId(x))}</p>`).join('')}</div>
<div class="meta"><p class="status ${esc(inv.status)}" id="invoice-status">${esc(l.statuses[inv.status] ?? inv.status)}</p>
<p>${esc(l.invoice)} <strong id="invoice-number">${esc(inv.number ?? inv.id)}</strong></p>
<p>${esc(l.issued(t.date(inv.created_at)))}${inv.due_at ? ` · ${esc(l.due(t.date(inv.due_at)))}` : ''}</p>
<p>${esc(l.period(t.date(inv.period_start), t.date(inv.period_end)))}</p></div>
</header>
<section class="buyer" id="buyer"><h2>${esc(l.billedTo)}</h2>
<p class="buyer-name">${esc(c.legal_name || c.name || '')}</p>
${c.legal_name && c.name && c.legal_name !== c.name ? `<p>${esc(c.name)}</p>` : ''}${c.reference ? `<p>${esc(l.reference(c.reference))}</p>` : ''}
${address ? `<p>${lines(address)}</p>` : ''}${(c.tax_ids ?? []).map((x) => `<p>${esc(x.type)} ${esc(x.value)}</p>`).join('')}
</section>
<table class="lines" id="lines"><thead><tr><th>${esc(l.description)}</th><th class="num">${esc(l.quantity)}</th><th class="num">${esc(l.unitPrice)}</th><th class="num">${esc(l.amount)}</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<dl class="totals" id="totals">
${inv.subtotal !== undefined ? `<dt>${esc(l.subtotal)}</dt><dd>${money(inv.subtotal)}</dd>` : ''}
${inv.tax !== undefined ? `<dt>${esc(l.tax)}${inv.tax_exempt === 'reverse' ? esc(l.reverseCharge) : ''}</dt><dd id="tax">${money(inv.tax)}</dd>` : ''}
<dt>${esc(l.total)}</dt><dd id="total">${money(inv.amount)}</dd>
${inv.amount_credited && inv.amount_credited !== '0' ? `<dt>${esc(l.credited)}</dt><dd>−${money(inv.amount_credited)}</dd>` : ''}
<dt>${esc(l.amountDue)}</dt><dd id="amount-due">${money(due)}</dd>
</dl>
<p class="pdf"><a id="pdf-link" href="${esc(pdfPath)}">${esc(l.downloadPdf)}</a></p>
${inv.status === 'paid' ? `<p class="paid-note" id="paid-note">${inv.paid_at ? esc(l.paidOnThanks(t.date(inv.paid_at))) : esc(l.paidThanks)}</p>` : ''}
${pay.payable ? payForm(pay, stripeKey, money(due), t.locale) : ''}`;
}

function payForm(pay: PayPanel, stripeKey: string, due: string, locale: Locale): string {
  const l = PAGE_LABELS[locale];
  const card = pay.savedCard ? `${esc(pay.savedCard.brand)} •••• ${esc(pay.savedCard.last4)}` : '';
  const saved = pay.savedCard
    ? `<div class="saved"><button type="button" id="pay-saved" data-attempt="${pay.attempt}">${
        pay.awaitingAuthentication ? l.authenticateAndPay(due, card) : l.payWithSaved(due, card)
      }</button>
${pay.awaitingAuthentication ? `<p class="note" id="awaiting-note">${esc(l.awaitingNote)}</p>` : ''}</div>`
    : '';
  const fresh = pay.newCard
    ? `<div class="new-card"><h3>${esc(pay.savedCard ? l.orNewCard : l.payWithCard)}</h3>
<div id="card-element" class="card-element"></div>
<button type="button" id="pay-new" data-attempt="${pay.newCardAttempt}">${l.pay(due)}</button>
<p class="note">${esc(l.newCardNote)}</p></div>`
    : '';
  const none = !saved && !fresh ? `<p class="note" id="no-card">${esc(l.noCard)}</p>` : '';
  return `<section class="pay" id="pay" data-stripe-key="${esc(pay.newCard ? stripeKey : '')}" data-texts="${scriptTexts(locale)}">
<h2>${esc(l.payThisInvoice)}</h2>
<p class="message" id="pay-message" role="status" aria-live="polite"></p>
${saved}${fresh}${none}
</section>`;
}

/**
 * The page script's messages in the page's language, with a refused card's reasons (decline-texts.ts), as an escaped
 * JSON attribute (the CSP allows no inline script).
 */
export const scriptTexts = (locale: Locale) =>
  esc(JSON.stringify({ ...PAGE_LABELS[locale].script, declines: DECLINE_LABELS[locale] }));
