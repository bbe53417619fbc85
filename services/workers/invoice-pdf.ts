import PDFDocument from 'pdfkit';
import { move } from 'piscina';
import { formatGrouped } from '../../shared/money/decimal.js';
import { CURRENCY_MINOR_UNITS } from '../../shared/money/currencies.js';

/**
 * piscina task: renders one invoice as a PDF (A4, pdfkit's built-in Helvetica, compressed content streams).
 * Runs in a worker thread (services/workers/pool.ts) so layout and deflate never block the api's event loop.
 * Input is plain data (structured-cloned into the worker); money arrives as exact decimal strings.
 */
export interface InvoicePdfTask {
  invoice: {
    id: string;
    customer_id: string;
    subscription_id: string;
    status: 'open' | 'paid' | 'uncollectible' | 'void';
    currency: string;
    amount: string;
    period_start: string;
    period_end: string;
    /** RFC 3339 */
    created_at: string;
    paid_at: string | null;
  };
  lines: { product_id: string | null; meter_id: string | null; description: string; quantity: string; unit_price: string; amount: string }[];
  customer: { name: string | null };
  address: { line1: string; city: string; state: string; zip: string } | null;
}

const MARGIN = 50;
const GRAY = '#555555';
const RULE = '#bbbbbb';
// Table columns (x, width) on an A4 page (595 pt wide, 495 between margins).
const COL = {
  description: { x: MARGIN, w: 225 },
  quantity: { x: 280, w: 75 },
  unitPrice: { x: 360, w: 85 },
  amount: { x: 450, w: 95 },
};

/** 1234567.5 → "1,234,567.50" with at least `minDecimals` decimals; never loses a digit. */
export function formatDecimal(value: string, minDecimals: number): string {
  return formatGrouped(value, minDecimals);
}

// pdfkit's built-in fonts encode text as WinAnsi (Latin-1 plus these); any other character would print
// as an unrelated glyph, so it is shown as '?' instead. (Full Unicode needs an embedded TrueType font.)
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');
export function printable(text: string): string {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    out += (c >= 0x20 && c < 0x7f) || (c >= 0xa0 && c <= 0xff) || WIN_ANSI_EXTRA.has(ch) ? ch : c === 0x09 || c === 0x0a ? ' ' : '?';
  }
  return out;
}

const STATUS_LABEL = { open: 'Open', paid: 'Paid', uncollectible: 'Uncollectible', void: 'Void' } as const;

export default async function renderInvoicePdf(task: InvoicePdfTask): Promise<Uint8Array> {
  const { invoice, lines } = task;
  const minor = CURRENCY_MINOR_UNITS[invoice.currency] ?? 2;
  const money = (v: string) => formatDecimal(v, minor);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    // Same invoice → same dates in the file, whenever it is downloaded.
    info: { Title: `Invoice ${invoice.id}`, Author: 'meterline', Creator: 'meterline', CreationDate: new Date(invoice.created_at), ModDate: new Date(invoice.created_at) },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c) => chunks.push(c));
  const finished = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  const pageBottom = () => doc.page.height - MARGIN - 30;
  const right = doc.page.width - MARGIN;

  // Header: title left, invoice facts right.
  doc.font('Helvetica-Bold').fontSize(24).fillColor('black').text('INVOICE', MARGIN, MARGIN);
  const facts: [string, string][] = [
    ['Invoice', invoice.id],
    ['Status', STATUS_LABEL[invoice.status]],
    ['Issued', invoice.created_at.slice(0, 10)],
  ];
  if (invoice.paid_at) facts.push(['Paid', invoice.paid_at.slice(0, 10)]);
  let y = MARGIN;
  for (const [label, value] of facts) {
    doc.font('Helvetica').fontSize(9).fillColor(GRAY).text(label, 300, y, { width: 70 });
    doc.font('Helvetica').fontSize(9).fillColor('black').text(value, 370, y, { width: right - 370, align: 'right' });
    y += 14;
  }

  // Bill to (left column): the account, its customer id and billing address; period (right column).
  const blockTop = Math.max(y, MARGIN + 40) + 20;
  doc.font('Helvetica-Bold').fontSize(10).fillColor('black').text('Bill to', MARGIN, blockTop);
  doc.font('Helvetica').fontSize(10);
  const billTo = [printable(task.customer.name ?? ''), `Customer ${invoice.customer_id}`];
  if (task.address) billTo.push(printable(task.address.line1), printable(`${task.address.city}, ${task.address.state} ${task.address.zip}`));
  else billTo.push('No billing address on file');
  for (const line of billTo.filter(Boolean)) doc.text(line, MARGIN, doc.y + 1, { width: 240 });
  const leftBottom = doc.y;
  doc.font('Helvetica-Bold').fontSize(10).text('Billing period', 300, blockTop);
  doc.font('Helvetica').fontSize(10).text(`${invoice.period_start} to ${invoice.period_end}`, 300, doc.y + 1, { width: right - 300 });
  doc.fillColor(GRAY).fontSize(9).text(`Subscription ${invoice.subscription_id}`, 300, doc.y + 2, { width: right - 300 });
  y = Math.max(leftBottom, doc.y) + 25;

  // Lines table.
  const tableHeader = () => {
    doc.font('Helvetica-Bold').fontSize(9).fillColor('black');
    doc.text('Description', COL.description.x, y, { width: COL.description.w });
    doc.text('Quantity', COL.quantity.x, y, { width: COL.quantity.w, align: 'right' });
    doc.text('Unit price', COL.unitPrice.x, y, { width: COL.unitPrice.w, align: 'right' });
    doc.text(`Amount (${invoice.currency})`, COL.amount.x, y, { width: COL.amount.w, align: 'right' });
    y += 14;
    doc.strokeColor(RULE).lineWidth(0.5).moveTo(MARGIN, y).lineTo(right, y).stroke();
    y += 6;
  };
  tableHeader();
  for (const line of lines) {
    const description = printable(line.description);
    const detail = line.meter_id ? `${line.product_id} · meter ${line.meter_id}` : (line.product_id ?? '');
    doc.font('Helvetica').fontSize(10);
    const descHeight = doc.heightOfString(description, { width: COL.description.w });
    doc.fontSize(8);
    const rowHeight = descHeight + doc.heightOfString(detail, { width: COL.description.w }) + 8;
    if (y + rowHeight > pageBottom()) {
      doc.addPage();
      y = MARGIN;
      tableHeader();
    }
    doc.font('Helvetica').fontSize(10).fillColor('black');
    doc.text(description, COL.description.x, y, { width: COL.description.w });
    doc.text(formatDecimal(line.quantity, 0), COL.quantity.x, y, { width: COL.quantity.w, align: 'right' });
    doc.text(money(line.unit_price), COL.unitPrice.x, y, { width: COL.unitPrice.w, align: 'right' });
    doc.text(money(line.amount), COL.amount.x, y, { width: COL.amount.w, align: 'right' });
    doc.fontSize(8).fillColor(GRAY).text(detail, COL.description.x, y + descHeight + 1, { width: COL.description.w });
    y += rowHeight;
  }
  if (lines.length === 0) {
    doc.font('Helvetica').fontSize(10).fillColor(GRAY).text('No charges in this period.', MARGIN, y);
    y += 18;
  }

  // Total.
  if (y + 40 > pageBottom()) {
    doc.addPage();
    y = MARGIN;
  }
  doc.strokeColor(RULE).lineWidth(0.5).moveTo(COL.unitPrice.x, y).lineTo(right, y).stroke();
  y += 8;
  doc.font('Helvetica-Bold').fontSize(12).fillColor('black');
  doc.text('Total', COL.unitPrice.x, y, { width: COL.unitPrice.w, align: 'right' });
  doc.text(`${money(invoice.amount)} ${invoice.currency}`, COL.amount.x - 40, y, { width: COL.amount.w + 40, align: 'right' });

  doc.end();
  await finished;
  // One buffer of its own (not a slice of Node's shared pool), so its memory can move to the main thread.
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return move(out) as unknown as Uint8Array;
}
