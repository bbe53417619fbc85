import PDFDocument from 'pdfkit';
import { move } from 'piscina';
import { formatGrouped } from '../../shared/money/decimal.js';
import { CURRENCY_MINOR_UNITS } from '../../shared/money/currencies.js';
import type { Seller } from '../domain/documents/seller.js';
import { baseFont, drawText, registerFonts, textWidth } from './pdf-fonts.js';
import { invoiceTexts, type InvoiceTexts } from '../domain/invoices/invoice-texts.js';

export type { Seller };

/**
 * The layout shared by meterline's billing documents (invoices, credit notes): A4, the embedded Noto fonts (every
 * script prints as written, services/workers/pdf-fonts.ts), compressed content streams — a title with the document's facts, a "Bill to" block beside a second block (the
 * period, the credited invoice), a table of lines and the totals. Runs inside piscina workers
 * (services/workers/invoice-pdf.ts, credit-note-pdf.ts); money arrives as exact decimal strings.
 */

export interface PdfDocumentSpec {
  title: string;
  seller?: Seller;
  /** The file's Title metadata ("Invoice inv_…"). */
  name: string;
  /** RFC 3339: the file's creation date, so the same document always has the same dates. */
  createdAt: string;
  /** Label → value pairs printed at the top right. */
  facts: [string, string][];
  billTo: string[];
  side: { heading: string; text: string; detail?: string };
  /** Printed under the blocks, before the lines ("Reason: …"). */
  note?: string;
  currency: string;
  /** `sub`: a sub-line of the line above (a tier of it), printed indented and smaller. */
  lines: {
    description: string;
    detail: string;
    quantity: string | null;
    unit_price: string | null;
    amount: string;
    sub?: boolean;
  }[];
  /** Shown when there are no lines. */
  empty: string;
  /** Label → amount; the last one is printed bold with the currency. */
  totals: [string, string][];
  /** The customer's language: the table's headings, amounts and quantities (services/domain/invoices/invoice-texts.ts); default English. */
  texts?: InvoiceTexts;
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

/**
 * A text as one printed line of a field: control characters (a tab, a newline inside a name) become spaces. Every
 * other character prints as written — the fonts cover Latin, Greek, Cyrillic, Arabic, Hebrew and CJK.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/** "Bill to": the account's name, a line naming the customer (its reference) when given, the billing address on file. */
export function billToLines(
  name: string | null,
  reference: string | null,
  address: { line1: string; city: string; state: string; zip: string } | null,
  noAddress = 'No billing address on file',
): string[] {
  const out = [printable(name ?? ''), reference ?? ''];
  if (address) out.push(printable(address.line1), printable(`${address.city}, ${address.state} ${address.zip}`));
  else out.push(noAddress);
  return out.filter(Boolean);
}

/** The seller's name (bold), address lines and tax id under the title, 240 pt wide; returns the y below them. */
function drawSeller(doc: PDFDocument, seller: Seller | undefined, top: number, taxIdLabel: string): number {
  if (!seller) return top;
  let y = top;
  const line = (text: string, bold: boolean, color: string) => {
    drawText(doc.fontSize(9).fillColor(color), printable(text), bold, MARGIN, y, { width: 240 });
    y = doc.y + 1;
  };
  if (seller.name) line(seller.name, true, 'black');
  for (const l of seller.address.split('\n').filter(Boolean)) line(l, false, GRAY);
  for (const id of seller.tax_ids) line(`${taxIdLabel} ${id}`, false, GRAY);
  if (seller.support_email) line(`Questions: ${seller.support_email}`, false, GRAY);
  return y;
}

/** The seller's logo at the top left, within 160 × 40 pt; returns where the title goes (below it, or the margin). */
function drawLogo(doc: PDFDocument, seller: Seller | undefined): number {
  if (!seller?.logo) return MARGIN;
  try {
    doc.image(Buffer.from(seller.logo.data), MARGIN, MARGIN, { fit: [160, 40] });
    return MARGIN + 48;
  } catch {
    // Its header was checked on upload; bytes pdfkit still cannot read leave the logo out, never the document.
    return MARGIN;
  }
}

/** The footer line, centred at the bottom of every page (below the bottom margin, so no page break). */
function drawFooter(doc: PDFDocument, footer: string | undefined): void {
  if (!footer) return;
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    drawText(doc.fontSize(8).fillColor(GRAY), printable(footer), false, MARGIN, doc.page.height - MARGIN + 10, {
      width: doc.page.width - 2 * MARGIN,
      align: 'center',
      lineBreak: false,
    });
    doc.page.margins.bottom = bottom;
  }
}

export async function renderPdfDocument(spec: PdfDocumentSpec): Promise<Uint8Array> {
  const minor = CURRENCY_MINOR_UNITS[spec.currency] ?? 2;
  const texts = spec.texts ?? invoiceTexts();
  const money = (v: string) => texts.amount(v, minor);
  const quantity = (v: string) => texts.quantity(v);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true, // the footer goes on every page once they are all laid out
    info: {
      Title: spec.name,
      Author: 'meterline',
      Creator: 'meterline',
      CreationDate: new Date(spec.createdAt),
      ModDate: new Date(spec.createdAt),
    },
  });
  registerFonts(doc);
  const chunks: Buffer[] = [];
  doc.on('data', (c) => chunks.push(c));
  const finished = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  const pageBottom = () => doc.page.height - MARGIN - 30;
  const right = doc.page.width - MARGIN;

  // Header: title and seller left, facts right.
  const titleTop = drawLogo(doc, spec.seller);
  drawText(doc.fontSize(24).fillColor('black'), spec.title, true, MARGIN, titleTop);
  const sellerBottom = drawSeller(doc, spec.seller, doc.y + 6, texts.labels.taxId);
  let y = MARGIN;
  // The facts' labels get the room the longest needs (German ones are long), at least 70 pt; values right-aligned.
  doc.fontSize(9);
  const labelWidth = Math.max(70, ...spec.facts.map(([label]) => textWidth(doc, label, false) + 6));
  for (const [label, value] of spec.facts) {
    drawText(doc.fontSize(9).fillColor(GRAY), label, false, 300, y, { width: labelWidth });
    drawText(doc.fontSize(9).fillColor('black'), value, false, 300 + labelWidth, y, {
      width: right - 300 - labelWidth,
      align: 'right',
    });
    y += 14;
  }

  // Bill to (left column); the side block (right column).
  const blockTop = Math.max(y, MARGIN + 40, sellerBottom) + 20;
  drawText(doc.fontSize(10).fillColor('black'), texts.labels.billTo, true, MARGIN, blockTop);
  doc.fontSize(10);
  for (const line of spec.billTo) drawText(doc, line, false, MARGIN, doc.y + 1, { width: 240 });
  const leftBottom = doc.y;
  drawText(doc.fontSize(10), spec.side.heading, true, 300, blockTop);
  drawText(doc.fontSize(10), spec.side.text, false, 300, doc.y + 1, { width: right - 300 });
  if (spec.side.detail)
    drawText(doc.fillColor(GRAY).fontSize(9), spec.side.detail, false, 300, doc.y + 2, { width: right - 300 });
  y = Math.max(leftBottom, doc.y) + 25;
  if (spec.note) {
    drawText(doc.fontSize(10).fillColor('black'), printable(spec.note), false, MARGIN, y, { width: right - MARGIN });
    y = doc.y + 15;
  }

  // Lines table.
  const tableHeader = () => {
    const l = texts.labels;
    doc.fontSize(9).fillColor('black');
    drawText(doc, l.description, true, COL.description.x, y, { width: COL.description.w });
    drawText(doc, l.quantity, true, COL.quantity.x, y, { width: COL.quantity.w, align: 'right' });
    drawText(doc, l.unitPrice, true, COL.unitPrice.x, y, { width: COL.unitPrice.w, align: 'right' });
    drawText(doc, `${l.amount} (${spec.currency})`, true, COL.amount.x, y, {
      width: COL.amount.w,
      align: 'right',
    });
    y += 14;
    doc.strokeColor(RULE).lineWidth(0.5).moveTo(MARGIN, y).lineTo(right, y).stroke();
    y += 6;
  };
  tableHeader();
  for (const [i, line] of spec.lines.entries()) {
    const description = printable(line.description);
    // The last sub-line of a line leaves a gap before the next line.
    const endsGroup = line.sub && !spec.lines[i + 1]?.sub;
    // A sub-line: indented, 9 pt, gray, right under its line.
    const indent = line.sub ? 12 : 0;
    const size = line.sub ? 9 : 10;
    const width = COL.description.w - indent;
    doc.font(baseFont()).fontSize(size);
    const descHeight = doc.heightOfString(description, { width });
    doc.fontSize(8);
    const rowHeight =
      descHeight +
      (line.detail ? doc.heightOfString(line.detail, { width }) + 1 : 0) +
      (line.sub ? (endsGroup ? 8 : 3) : 8);
    if (y + rowHeight > pageBottom()) {
      doc.addPage();
      y = MARGIN;
      tableHeader();
    }
    doc.fontSize(size).fillColor(line.sub ? GRAY : 'black');
    drawText(doc, description, false, COL.description.x + indent, y, { width });
    doc.font(baseFont());
    if (line.quantity !== null)
      doc.text(quantity(line.quantity), COL.quantity.x, y, { width: COL.quantity.w, align: 'right' });
    if (line.unit_price !== null)
      doc.text(money(line.unit_price), COL.unitPrice.x, y, { width: COL.unitPrice.w, align: 'right' });
    doc.text(money(line.amount), COL.amount.x, y, { width: COL.amount.w, align: 'right' });
    if (line.detail)
      drawText(doc.fontSize(8).fillColor(GRAY), line.detail, false, COL.description.x + indent, y + descHeight + 1, {
        width,
      });
    y += rowHeight;
  }
  if (spec.lines.length === 0) {
    drawText(doc.fontSize(10).fillColor(GRAY), spec.empty, false, MARGIN, y);
    y += 18;
  }

  // Totals.
  if (y + 20 + 18 * spec.totals.length > pageBottom()) {
    // Totals alone on a page still sit under the table's header, so the columns read the same.
    doc.addPage();
    y = MARGIN;
    tableHeader();
  }
  doc.strokeColor(RULE).lineWidth(0.5).moveTo(COL.unitPrice.x, y).lineTo(right, y).stroke();
  y += 8;
  spec.totals.forEach(([label, amount], i) => {
    const last = i === spec.totals.length - 1;
    doc.fontSize(last ? 12 : 10).fillColor('black');
    drawText(doc, label, last, COL.unitPrice.x - 80, y, { width: COL.unitPrice.w + 80, align: 'right' });
    doc.font(baseFont(last));
    doc.text(last ? `${money(amount)} ${spec.currency}` : money(amount), COL.amount.x - 40, y, {
      width: COL.amount.w + 40,
      align: 'right',
    });
    y += last ? 18 : 14;
  });

  drawFooter(doc, spec.seller?.footer);
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
