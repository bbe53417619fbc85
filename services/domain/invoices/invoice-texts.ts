import { formatGrouped } from '../../../shared/money/decimal.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import { moneyText } from '../../../shared/money/amount-text.js';

/**
 * The fixed texts of a customer's billing documents in its `locale` (issue 46, docs/billing.md "Languages"), and
 * amounts and dates formatted for it with Intl: the invoice and credit-note PDFs use them (services/workers/
 * invoice-pdf.ts); the emails, hosted pages and portal format their amounts and dates with them and keep their own
 * texts (emails/email-texts.ts, hosted-pages/page-texts.ts, portal/portal-texts.ts, credit-notes/
 * credit-note-texts.ts). `en` is the default and keeps the formats meterline always printed (1,234.50; ISO dates),
 * so English documents read as before.
 */
export const LOCALES = ['en', 'de', 'fr', 'es', 'ja'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export const isLocale = (v: unknown): v is Locale =>
  typeof v === 'string' && (LOCALES as readonly string[]).includes(v);

export interface InvoiceLabels {
  invoiceTitle: string;
  creditNoteTitle: string;
  invoiceNumber: string;
  draftInvoice: string;
  creditNoteNumber: string;
  status: string;
  statuses: Record<'draft' | 'open' | 'paid' | 'uncollectible' | 'void', string>;
  issued: string;
  due: string;
  paid: string;
  billTo: string;
  noAddress: string;
  reference: string;
  taxId: string;
  billingPeriod: string;
  /** "{from} to {to}". */
  range: (from: string, to: string) => string;
  thresholdInvoice: string;
  usageFrom: (from: string, to: string) => string;
  withinPeriod: (range: string) => string;
  billedInAdvance: string;
  flatFeesAhead: string;
  description: string;
  quantity: string;
  unitPrice: string;
  amount: string;
  noCharges: string;
  subtotal: string;
  tax: string;
  taxIncluded: string;
  total: string;
  credited: string;
  net: string;
  amountDue: string;
  reverseCharge: string;
}

const en: InvoiceLabels = {
  invoiceTitle: 'INVOICE',
  creditNoteTitle: 'CREDIT NOTE',
  invoiceNumber: 'Invoice number',
  draftInvoice: 'Draft invoice',
  creditNoteNumber: 'Credit note number',
  status: 'Status',
  statuses: { draft: 'Draft', open: 'Open', paid: 'Paid', uncollectible: 'Uncollectible', void: 'Void' },
  issued: 'Issued',
  due: 'Due',
  paid: 'Paid',
  billTo: 'Bill to',
  noAddress: 'No billing address on file',
  reference: 'Reference',
  taxId: 'Tax ID',
  billingPeriod: 'Billing period',
  range: (from, to) => `${from} to ${to}`,
  thresholdInvoice: 'Threshold invoice',
  usageFrom: (from, to) => `Usage from ${from} to ${to}`,
  withinPeriod: (range) => `Within the billing period ${range}`,
  billedInAdvance: 'Billed in advance',
  flatFeesAhead: 'Flat fees for the period ahead',
  description: 'Description',
  quantity: 'Quantity',
  unitPrice: 'Unit price',
  amount: 'Amount',
  noCharges: 'No charges in this period.',
  subtotal: 'Subtotal',
  tax: 'Tax',
  taxIncluded: 'Tax included',
  total: 'Total',
  credited: 'Credited',
  net: 'Net',
  amountDue: 'Amount due',
  reverseCharge:
    'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC).',
};

const de: InvoiceLabels = {
  invoiceTitle: 'RECHNUNG',
  creditNoteTitle: 'GUTSCHRIFT',
  invoiceNumber: 'Rechnungsnummer',
  draftInvoice: 'Rechnungsentwurf',
  creditNoteNumber: 'Gutschriftsnummer',
  status: 'Status',
  statuses: { draft: 'Entwurf', open: 'Offen', paid: 'Bezahlt', uncollectible: 'Uneinbringlich', void: 'Storniert' },
  issued: 'Rechnungsdatum',
  due: 'Fällig',
  paid: 'Bezahlt',
  billTo: 'Rechnung an',
  noAddress: 'Keine Rechnungsadresse hinterlegt',
  reference: 'Referenz',
  taxId: 'USt-IdNr.',
  billingPeriod: 'Abrechnungszeitraum',
  range: (from, to) => `${from} bis ${to}`,
  thresholdInvoice: 'Schwellenwertrechnung',
  usageFrom: (from, to) => `Nutzung vom ${from} bis ${to}`,
  withinPeriod: (range) => `Im Abrechnungszeitraum ${range}`,
  billedInAdvance: 'Im Voraus berechnet',
  flatFeesAhead: 'Pauschalen für den kommenden Zeitraum',
  description: 'Beschreibung',
  quantity: 'Menge',
  unitPrice: 'Einzelpreis',
  amount: 'Betrag',
  noCharges: 'Keine Kosten in diesem Zeitraum.',
  subtotal: 'Zwischensumme',
  tax: 'Steuer',
  taxIncluded: 'Enthaltene Steuer',
  total: 'Gesamtbetrag',
  credited: 'Gutgeschrieben',
  net: 'Netto',
  amountDue: 'Offener Betrag',
  reverseCharge: 'Steuerschuldnerschaft des Leistungsempfängers (Artikel 196, Richtlinie 2006/112/EG des Rates).',
};

const fr: InvoiceLabels = {
  invoiceTitle: 'FACTURE',
  creditNoteTitle: 'AVOIR',
  invoiceNumber: 'Numéro de facture',
  draftInvoice: 'Brouillon de facture',
  creditNoteNumber: 'Numéro d’avoir',
  status: 'Statut',
  statuses: { draft: 'Brouillon', open: 'Ouverte', paid: 'Payée', uncollectible: 'Irrécouvrable', void: 'Annulée' },
  issued: 'Date d’émission',
  due: 'Échéance',
  paid: 'Payée le',
  billTo: 'Facturé à',
  noAddress: 'Aucune adresse de facturation enregistrée',
  reference: 'Référence',
  taxId: 'N° de TVA',
  billingPeriod: 'Période de facturation',
  range: (from, to) => `du ${from} au ${to}`,
  thresholdInvoice: 'Facture de seuil',
  usageFrom: (from, to) => `Consommation du ${from} au ${to}`,
  withinPeriod: (range) => `Dans la période de facturation ${range}`,
  billedInAdvance: 'Facturé d’avance',
  flatFeesAhead: 'Forfaits de la période à venir',
  description: 'Description',
  quantity: 'Quantité',
  unitPrice: 'Prix unitaire',
  amount: 'Montant',
  noCharges: 'Aucun frais sur cette période.',
  subtotal: 'Sous-total',
  tax: 'TVA',
  taxIncluded: 'TVA incluse',
  total: 'Total',
  credited: 'Crédité',
  net: 'Net',
  amountDue: 'Montant dû',
  reverseCharge: 'Autoliquidation : TVA due par le preneur (article 196, directive 2006/112/CE du Conseil).',
};

const es: InvoiceLabels = {
  invoiceTitle: 'FACTURA',
  creditNoteTitle: 'NOTA DE CRÉDITO',
  invoiceNumber: 'Número de factura',
  draftInvoice: 'Borrador de factura',
  creditNoteNumber: 'Número de nota de crédito',
  status: 'Estado',
  statuses: { draft: 'Borrador', open: 'Abierta', paid: 'Pagada', uncollectible: 'Incobrable', void: 'Anulada' },
  issued: 'Emitida',
  due: 'Vencimiento',
  paid: 'Pagada',
  billTo: 'Facturar a',
  noAddress: 'Sin dirección de facturación registrada',
  reference: 'Referencia',
  taxId: 'NIF',
  billingPeriod: 'Periodo de facturación',
  range: (from, to) => `del ${from} al ${to}`,
  thresholdInvoice: 'Factura por umbral',
  usageFrom: (from, to) => `Consumo del ${from} al ${to}`,
  withinPeriod: (range) => `Dentro del periodo de facturación ${range}`,
  billedInAdvance: 'Facturado por adelantado',
  flatFeesAhead: 'Cuotas fijas del próximo periodo',
  description: 'Descripción',
  quantity: 'Cantidad',
  unitPrice: 'Precio unitario',
  amount: 'Importe',
  noCharges: 'Sin cargos en este periodo.',
  subtotal: 'Subtotal',
  tax: 'Impuestos',
  taxIncluded: 'Impuestos incluidos',
  total: 'Total',
  credited: 'Abonado',
  net: 'Neto',
  amountDue: 'Importe pendiente',
  reverseCharge:
    'Inversión del sujeto pasivo: IVA a cargo del destinatario (artículo 196, Directiva 2006/112/CE del Consejo).',
};

const ja: InvoiceLabels = {
  invoiceTitle: '請求書',
  creditNoteTitle: 'クレジットノート',
  invoiceNumber: '請求書番号',
  draftInvoice: '請求書（下書き）',
  creditNoteNumber: 'クレジットノート番号',
  status: 'ステータス',
  statuses: { draft: '下書き', open: '未払い', paid: '支払済み', uncollectible: '回収不能', void: '無効' },
  issued: '発行日',
  due: '支払期日',
  paid: '支払日',
  billTo: '請求先',
  noAddress: '請求先住所の登録なし',
  reference: '参照番号',
  taxId: '登録番号',
  billingPeriod: '請求期間',
  range: (from, to) => `${from}〜${to}`,
  thresholdInvoice: 'しきい値請求書',
  usageFrom: (from, to) => `${from}〜${to}のご利用分`,
  withinPeriod: (range) => `請求期間 ${range} 内`,
  billedInAdvance: '前払い請求',
  flatFeesAhead: '次期間の固定料金',
  description: '内容',
  quantity: '数量',
  unitPrice: '単価',
  amount: '金額',
  noCharges: 'この期間のご請求はありません。',
  subtotal: '小計',
  tax: '税',
  taxIncluded: '内税',
  total: '合計',
  credited: 'クレジット済み',
  net: '差引',
  amountDue: '請求残高',
  reverseCharge: 'リバースチャージ：VATは受領者が申告します（EU理事会指令2006/112/EC第196条）。',
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const INVOICE_LABELS: Record<Locale, InvoiceLabels> = { en, de, fr, es, ja };

export interface InvoiceTexts {
  locale: Locale;
  labels: InvoiceLabels;
  /** An exact decimal as money: at least the currency's decimals, every digit kept ("1.234,50" in de). */
  amount: (value: string, minorDigits: number) => string;
  /** An amount of money with its ISO 4217 code after it, every minor unit shown ("1.234,50 EUR" in de). */
  money: (value: string, currency: string) => string;
  /** An exact decimal quantity, grouped ("1 234,5" in fr). */
  quantity: (value: string) => string;
  /** A day (YYYY-MM-DD or RFC 3339, read in UTC): ISO in en, the locale's numeric date otherwise ("31.10.2026"). */
  date: (value: string) => string;
}

/** Decimals written in an exact decimal string. */
const decimalsOf = (v: string) => (v.includes('.') ? v.length - v.indexOf('.') - 1 : 0);

/**
 * The locale a language tag names: `de` and `de-DE` are de; anything else (absent, unknown) is the default, en. The
 * portal's sessions carry tags like `de-DE`; customers carry the bare five.
 */
export function localeOf(tag?: string | null): Locale {
  const lang = typeof tag === 'string' ? tag.slice(0, 2).toLowerCase() : '';
  return isLocale(lang) ? lang : DEFAULT_LOCALE;
}

/**
 * The locale a browser asks for when nothing else names one (an unknown link, a checkout with no customer yet): the
 * first of its `Accept-Language` tags, by their q weights, whose language is one of the five; else English.
 */
export function localeOfAcceptLanguage(header?: string | null): Locale {
  const tags = (header ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { lang: tag.trim().slice(0, 2).toLowerCase(), q: q === undefined ? 1 : Number(q), i };
    })
    .filter((t) => t.q > 0 && isLocale(t.lang))
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return (tags[0]?.lang as Locale | undefined) ?? DEFAULT_LOCALE;
}

/** The texts and formats of `locale`; an unknown or absent locale is English. */
export function invoiceTexts(locale?: string | null): InvoiceTexts {
  const l: Locale = isLocale(locale) ? locale : DEFAULT_LOCALE;
  if (l === 'en')
    return {
      locale: l,
      labels: en,
      amount: (v, minor) => formatGrouped(v, minor),
      // As English emails always wrote it.
      money: (v, currency) => moneyText(v, currency),
      quantity: (v) => formatGrouped(v, 0),
      date: (v) => v.slice(0, 10),
    };
  // Intl formats a decimal string exactly (no float): every written decimal is kept, at least the currency's.
  const number = (v: string, min: number) =>
    new Intl.NumberFormat(l, {
      minimumFractionDigits: min,
      maximumFractionDigits: Math.max(min, decimalsOf(v)),
    }).format(v as unknown as number);
  const dates = new Intl.DateTimeFormat(l, { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: 'UTC' });
  return {
    locale: l,
    labels: INVOICE_LABELS[l],
    amount: (v, minor) => number(v, minor),
    money: (v, currency) => `${number(v, minorUnits(currency))} ${currency}`,
    quantity: (v) => number(v, 0),
    date: (v) => dates.format(new Date(`${v.slice(0, 10)}T00:00:00Z`)),
  };
}
