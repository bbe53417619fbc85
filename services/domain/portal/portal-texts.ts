import { isLocale, type Locale } from '../invoices/invoice-texts.js';

/**
 * The customer portal's fixed texts (services/control/portal/), one table per language: the navigation, its Back
 * link and the invoices page. A visit's language is its session's `locale` when that names one of the five, else
 * the customer's (`portalLocale`). `en` says what the portal always said. The other pages are English still.
 */
export interface PortalLabels {
  sections: Record<'overview' | 'invoices' | 'paymentMethods' | 'balances' | 'billingDetails', string>;
  back: string;
  invoicesTitle: string;
  number: string;
  date: string;
  amount: string;
  status: string;
  document: string;
  statuses: Record<'draft' | 'open' | 'paid' | 'uncollectible' | 'void', string>;
  viewAndPay: string;
  view: string;
  noInvoices: string;
}

const en: PortalLabels = {
  sections: {
    overview: 'Overview',
    invoices: 'Invoices',
    paymentMethods: 'Payment methods',
    balances: 'Credit and entitlements',
    billingDetails: 'Billing details',
  },
  back: 'Back',
  invoicesTitle: 'Your invoices',
  number: 'Number',
  date: 'Date',
  amount: 'Amount',
  status: 'Status',
  document: 'Document',
  statuses: { open: 'Due', paid: 'Paid', void: 'Void', uncollectible: 'Uncollectible', draft: 'Draft' },
  viewAndPay: 'View and pay',
  view: 'View',
  noInvoices: 'No invoices yet.',
};

const de: PortalLabels = {
  sections: {
    overview: 'Übersicht',
    invoices: 'Rechnungen',
    paymentMethods: 'Zahlungsmethoden',
    balances: 'Guthaben und Kontingente',
    billingDetails: 'Rechnungsdaten',
  },
  back: 'Zurück',
  invoicesTitle: 'Ihre Rechnungen',
  number: 'Nummer',
  date: 'Datum',
  amount: 'Betrag',
  status: 'Status',
  document: 'Dokument',
  statuses: { open: 'Fällig', paid: 'Bezahlt', void: 'Storniert', uncollectible: 'Uneinbringlich', draft: 'Entwurf' },
  viewAndPay: 'Ansehen und bezahlen',
  view: 'Ansehen',
  noInvoices: 'Noch keine Rechnungen.',
};

const fr: PortalLabels = {
  sections: {
    overview: 'Vue d’ensemble',
    invoices: 'Factures',
    paymentMethods: 'Moyens de paiement',
    balances: 'Crédits et droits',
    billingDetails: 'Informations de facturation',
  },
  back: 'Retour',
  invoicesTitle: 'Vos factures',
  number: 'Numéro',
  date: 'Date',
  amount: 'Montant',
  status: 'Statut',
  document: 'Document',
  statuses: { open: 'À payer', paid: 'Payée', void: 'Annulée', uncollectible: 'Irrécouvrable', draft: 'Brouillon' },
  viewAndPay: 'Voir et payer',
  view: 'Voir',
  noInvoices: 'Aucune facture pour l’instant.',
};

const es: PortalLabels = {
  sections: {
    overview: 'Resumen',
    invoices: 'Facturas',
    paymentMethods: 'Métodos de pago',
    balances: 'Crédito y derechos',
    billingDetails: 'Datos de facturación',
  },
  back: 'Volver',
  invoicesTitle: 'Sus facturas',
  number: 'Número',
  date: 'Fecha',
  amount: 'Importe',
  status: 'Estado',
  document: 'Documento',
  statuses: { open: 'Pendiente', paid: 'Pagada', void: 'Anulada', uncollectible: 'Incobrable', draft: 'Borrador' },
  viewAndPay: 'Ver y pagar',
  view: 'Ver',
  noInvoices: 'Todavía no hay facturas.',
};

const ja: PortalLabels = {
  sections: {
    overview: '概要',
    invoices: '請求書',
    paymentMethods: 'お支払い方法',
    balances: 'クレジットと利用枠',
    billingDetails: '請求先情報',
  },
  back: '戻る',
  invoicesTitle: '請求書一覧',
  number: '番号',
  date: '日付',
  amount: '金額',
  status: 'ステータス',
  document: '書類',
  statuses: { open: '未払い', paid: '支払済み', void: '無効', uncollectible: '回収不能', draft: '下書き' },
  viewAndPay: '確認して支払う',
  view: '確認',
  noInvoices: '請求書はまだありません。',
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const PORTAL_LABELS: Record<Locale, PortalLabels> = { en, de, fr, es, ja };

/** A portal visit's language: its session's tag when it names one of the five (de, de-DE), else the customer's. */
export function portalLocale(sessionTag: string | null, customerLocale: string | null): Locale {
  const lang = sessionTag?.slice(0, 2).toLowerCase();
  if (isLocale(lang)) return lang;
  return isLocale(customerLocale) ? customerLocale : 'en';
}
