import type { Locale } from '../invoices/invoice-texts.js';

/**
 * The fixed texts of a credit note's PDF (services/workers/credit-note-pdf.ts) that an invoice does not have, one
 * table per language of the customer's `locale`; its title, number, issue date, table headings, amounts and dates
 * come from the invoice texts (services/domain/invoices/invoice-texts.ts). `en` says what the PDF always said.
 */
export interface CreditNoteLabels {
  creditNote: string;
  invoice: string;
  settled: string;
  settlement: { credit: string; refund: Record<'pending' | 'succeeded' | 'failed', string> };
  /** "Customer cus_…" under the name in "Bill to". */
  customer: (id: string) => string;
  creditedInvoice: string;
  /** "Period {range}, invoiced {amount}" */
  periodInvoiced: (range: string, amount: string) => string;
  reason: (reason: string) => string;
  /** The credited line's position on the invoice, from 1. */
  invoiceLine: (position: number) => string;
  noLines: string;
  totalCredited: string;
}

const en: CreditNoteLabels = {
  creditNote: 'Credit note',
  invoice: 'Invoice',
  settled: 'Settled',
  settlement: {
    credit: 'Deducted from the amount due',
    refund: { pending: 'Refund in progress', succeeded: 'Refunded to the card charged', failed: 'Refund failed' },
  },
  customer: (id) => `Customer ${id}`,
  creditedInvoice: 'Credited invoice',
  periodInvoiced: (range, amount) => `Period ${range}, invoiced ${amount}`,
  reason: (r) => `Reason: ${r}`,
  invoiceLine: (n) => `Invoice line ${n}`,
  noLines: 'No lines.',
  totalCredited: 'Total credited',
};

const de: CreditNoteLabels = {
  creditNote: 'Gutschrift',
  invoice: 'Rechnung',
  settled: 'Ausgleich',
  settlement: {
    credit: 'Vom offenen Betrag abgezogen',
    refund: {
      pending: 'Erstattung in Bearbeitung',
      succeeded: 'Auf die belastete Karte erstattet',
      failed: 'Erstattung fehlgeschlagen',
    },
  },
  customer: (id) => `Kunde ${id}`,
  creditedInvoice: 'Gutgeschriebene Rechnung',
  periodInvoiced: (range, amount) => `Zeitraum ${range}, berechnet ${amount}`,
  reason: (r) => `Grund: ${r}`,
  invoiceLine: (n) => `Rechnungsposition ${n}`,
  noLines: 'Keine Positionen.',
  totalCredited: 'Gutschrift gesamt',
};

const fr: CreditNoteLabels = {
  creditNote: 'Avoir',
  invoice: 'Facture',
  settled: 'Règlement',
  settlement: {
    credit: 'Déduit du montant dû',
    refund: {
      pending: 'Remboursement en cours',
      succeeded: 'Remboursé sur la carte débitée',
      failed: 'Échec du remboursement',
    },
  },
  customer: (id) => `Client ${id}`,
  creditedInvoice: 'Facture créditée',
  periodInvoiced: (range, amount) => `Période ${range}, facturé ${amount}`,
  reason: (r) => `Motif : ${r}`,
  invoiceLine: (n) => `Ligne de facture ${n}`,
  noLines: 'Aucune ligne.',
  totalCredited: 'Total crédité',
};

const es: CreditNoteLabels = {
  creditNote: 'Nota de crédito',
  invoice: 'Factura',
  settled: 'Liquidación',
  settlement: {
    credit: 'Descontado del importe pendiente',
    refund: {
      pending: 'Reembolso en curso',
      succeeded: 'Reembolsado a la tarjeta cargada',
      failed: 'Reembolso fallido',
    },
  },
  customer: (id) => `Cliente ${id}`,
  creditedInvoice: 'Factura abonada',
  periodInvoiced: (range, amount) => `Periodo ${range}, facturado ${amount}`,
  reason: (r) => `Motivo: ${r}`,
  invoiceLine: (n) => `Línea de factura ${n}`,
  noLines: 'Sin líneas.',
  totalCredited: 'Total abonado',
};

const ja: CreditNoteLabels = {
  creditNote: 'クレジットノート',
  invoice: '請求書',
  settled: '精算方法',
  settlement: {
    credit: '請求残高から差し引き',
    refund: { pending: '返金処理中', succeeded: '請求したカードに返金済み', failed: '返金失敗' },
  },
  customer: (id) => `顧客 ${id}`,
  creditedInvoice: '対象の請求書',
  periodInvoiced: (range, amount) => `期間 ${range}、請求額 ${amount}`,
  reason: (r) => `理由：${r}`,
  invoiceLine: (n) => `請求書の明細 ${n}`,
  noLines: '明細はありません。',
  totalCredited: 'クレジット合計',
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const CREDIT_NOTE_LABELS: Record<Locale, CreditNoteLabels> = { en, de, fr, es, ja };
