import PDFDocument from 'pdfkit';
import { move } from 'piscina';
import { formatGrouped } from '../../shared/money/decimal.js';
import { CURRENCY_MINOR_UNITS } from '../../shared/money/currencies.js';
import type { Seller } from '../domain/documents/seller.js';

export type { Seller };

/**
 * The layout shared by meterline's billing documents (invoices, credit notes): A4, pdfkit's built-in Helvetica,
 * compressed content streams — a title with the document's facts, a "Bill to" block beside a second block (the
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
    out +=
      (c >= 0x20 && c < 0x7f) || (c >= 0xa0 && c <= 0xff) || WIN_ANSI_EXTRA.has(ch)
        ? ch
        : c === 0x09 || c === 0x0a
          ? ' '
          : '?';
  }
  return out;
}

/** "Bill to": the account's name, a line naming the customer (its reference) when given, the billing address on file. */
export function billToLines(
  name: string | null,
  reference: string | null,
  address: { line1: string; city: string; state: string; zip: string } | null,
): string[] {
  const out = [printable(name ?? ''), reference ?? ''];
  if (address) out.push(printable(address.line1), printable(`${address.city}, ${address.state} ${address.zip}`));
  else out.push('No billing address on file');
  return out.filter(Boolean);
}

/** The seller's name (bold), address lines and tax id under the title, 240 pt wide; returns the y below them. */
function drawSeller(doc: PDFDocument, seller: Seller | undefined, top: number): number {
  if (!seller) return top;
  let y = top;
  const line = (text: string, font: string, color: string) => {
    doc.font(font).fontSize(9).fillColor(color).text(printable(text), MARGIN, y, { width: 240 });
    y = doc.y + 1;
  };
  if (seller.name) line(seller.name, 'Helvetica-Bold', 'black');
  for (const l of seller.address.split('\n').filter(Boolean)) line(l, 'Helvetica', GRAY);
  for (const id of seller.tax_ids) line(`Tax ID ${id}`, 'Helvetica', GRAY);
  if (seller.support_email) line(`Questions: ${seller.support_email}`, 'Helvetica', GRAY);
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
    doc
      .font('Helvetica')
      .fontSize(8)
      .fillColor(GRAY)
      .text(printable(footer), MARGIN, doc.page.height - MARGIN + 10, {
        width: doc.page.width - 2 * MARGIN,
        align: 'center',
        lineBreak: false,
      });
    doc.page.margins.bottom = bottom;
  }
}

export async function renderPdfDocument(spec: PdfDocumentSpec): Promise<Uint8Array> {
  const minor = CURRENCY_MINOR_UNITS[spec.currency] ?? 2;
  const money = (v: string) => formatDecimal(v, minor);
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
  doc.font('Helvetica-Bold').fontSize(24).fillColor('black').text(spec.title, MARGIN, titleTop);
  const sellerBottom = drawSeller(doc, spec.seller, doc.y + 6);
  let y = MARGIN;
  for (const [label, value] of spec.facts) {
    doc.font('Helvetica').fontSize(9).fillColor(GRAY).text(label, 300, y, { width: 70 });
    doc
      .font('Helvetica')
      .fontSize(9)
      .fillColor('black')
      .text(value, 370, y, { width: right - 370, align: 'right' });
    y += 14;
  }

  // Bill to (left column); the side block (right column).
  const blockTop = Math.max(y, MARGIN + 40, sellerBottom) + 20;
  doc.font('Helvetica-Bold').fontSize(10).fillColor('black').text('Bill to', MARGIN, blockTop);
  doc.font('Helvetica').fontSize(10);
  for (const line of spec.billTo) doc.text(line, MARGIN, doc.y + 1, { width: 240 });
  const leftBottom = doc.y;
  doc.font('Helvetica-Bold').fontSize(10).text(spec.side.heading, 300, blockTop);
  doc
    .font('Helvetica')
    .fontSize(10)
    .text(spec.side.text, 300, doc.y + 1, { width: right - 300 });
  if (spec.side.detail)
    doc
      .fillColor(GRAY)
      .fontSize(9)
      .text(spec.side.detail, 300, doc.y + 2, { width: right - 300 });
  y = Math.max(leftBottom, doc.y) + 25;
  if (spec.note) {
    doc
      .font('Helvetica')
      .fontSize(10)
      .fillColor('black')
      .text(printable(spec.note), MARGIN, y, { width: right - MARGIN });
    y = doc.y + 15;
  }

  // Lines table.
  const tableHeader = () => {
    doc.font('Helvetica-Bold').fontSize(9).fillColor('black');
    doc.text('Description', COL.description.x, y, { width: COL.description.w });
    doc.text('Quantity', COL.quantity.x, y, { width: COL.quantity.w, align: 'right' });
    doc.text('Unit price', COL.unitPrice.x, y, { width: COL.unitPrice.w, align: 'right' });
    doc.text(`Amount (${spec.currency})`, COL.amount.x, y, { width: COL.amount.w, align: 'right' });
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
    doc.font('Helvetica').fontSize(size);
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
    doc
      .font('Helvetica')
      .fontSize(size)
      .fillColor(line.sub ? GRAY : 'black');
    doc.text(description, COL.description.x + indent, y, { width });
    if (line.quantity !== null)
      doc.text(formatDecimal(line.quantity, 0), COL.quantity.x, y, { width: COL.quantity.w, align: 'right' });
    if (line.unit_price !== null)
      doc.text(money(line.unit_price), COL.unitPrice.x, y, { width: COL.unitPrice.w, align: 'right' });
    doc.text(money(line.amount), COL.amount.x, y, { width: COL.amount.w, align: 'right' });
    if (line.detail)
      doc
        .fontSize(8)
        .fillColor(GRAY)
        .text(line.detail, COL.description.x + indent, y + descHeight + 1, { width });
    y += rowHeight;
  }
  if (spec.lines.length === 0) {
    doc.font('Helvetica').fontSize(10).fillColor(GRAY).text(spec.empty, MARGIN, y);
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
    doc
      .font(last ? 'Helvetica-Bold' : 'Helvetica')
      .fontSize(last ? 12 : 10)
      .fillColor('black');
    doc.text(label, COL.unitPrice.x - 80, y, { width: COL.unitPrice.w + 80, align: 'right' });
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
