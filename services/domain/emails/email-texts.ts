import type { Locale } from '../invoices/invoice-texts.js';

/**
 * The fixed texts of the emails a customer receives (./message.ts), one table per language of its `locale` (the
 * languages of services/domain/invoices/invoice-texts.ts, which formats the amounts and dates put into them). `en`
 * is the default and says what English emails always said. Every table has every key (a unit test checks it);
 * `seller` is '' when the seller has no name, and the texts then leave "from …" out.
 */
export interface EmailLabels {
  testSubject: string;
  testBanner: string;
  invoiceNumber: string;
  period: string;
  amount: string;
  creditNote: string;
  credit: string;
  refund: string;
  /** "{from} to {to}" */
  range: (from: string, to: string) => string;
  questions: (address: string) => string;
  invoiceSubject: (number: string, seller: string, total: string) => string;
  invoiceHeading: (number: string) => string;
  invoiceBody: (number: string, seller: string, period: string, total: string) => string;
  viewAndPay: string;
  failedSubject: (number: string, seller: string, total: string) => string;
  failedHeading: (number: string) => string;
  failedBody: (number: string, total: string, period: string) => string;
  whatFailed: (why: string) => string;
  updateAndRetry: string;
  checkAndRetry: string;
  attached: string;
  updatePaymentMethod: string;
  viewInvoice: string;
  noteSubject: (number: string, seller: string, amount: string) => string;
  noteHeading: (number: string) => string;
  /** A credit note's body, by how the note settles: a credit or a refund. */
  noteBody: Record<'credit' | 'refund', (amount: string, number: string, period: string, note: string) => string>;
}

const en: EmailLabels = {
  testSubject: '[Test] ',
  testBanner: 'Test email: this customer is on a test clock, so its dates are simulated.',
  invoiceNumber: 'Invoice number',
  period: 'Period',
  amount: 'Amount',
  creditNote: 'Credit note',
  credit: 'Credit',
  refund: 'Refund',
  range: (from, to) => `${from} to ${to}`,
  questions: (a) => `Questions? Write to ${a}.`,
  invoiceSubject: (n, s, total) => `Invoice ${n}${s ? ` from ${s}` : ''}: ${total}`,
  invoiceHeading: (n) => `Invoice ${n}`,
  invoiceBody: (n, s, period, total) =>
    `Your invoice ${n}${s ? ` from ${s}` : ''} for ${period} is attached: ${total}.`,
  viewAndPay: 'View and pay the invoice',
  failedSubject: (n, s, total) => `Payment failed for invoice ${n}${s ? ` from ${s}` : ''}: ${total}`,
  failedHeading: (n) => `Payment failed for invoice ${n}`,
  failedBody: (n, total, period) => `We could not collect the payment of invoice ${n} (${total}, ${period}).`,
  whatFailed: (why) => `What failed: ${why}`,
  updateAndRetry: 'Please update your payment method; we will try again.',
  checkAndRetry: 'Please check your payment method; we will try again.',
  attached: 'The invoice is attached.',
  updatePaymentMethod: 'Update payment method',
  viewInvoice: 'View the invoice',
  noteSubject: (n, s, amount) => `Credit note for invoice ${n}${s ? ` from ${s}` : ''}: ${amount}`,
  noteHeading: (n) => `Credit note for invoice ${n}`,
  noteBody: {
    credit: (amount, n, period, note) =>
      `A credit of ${amount} on invoice ${n} (${period}) is attached as credit note ${note}.`,
    refund: (amount, n, period, note) =>
      `A refund of ${amount} on invoice ${n} (${period}) is attached as credit note ${note}.`,
  },
};

const de: EmailLabels = {
  testSubject: '[Test] ',
  testBanner: 'Test-E-Mail: Dieser Kunde läuft auf einer Testuhr, seine Daten sind simuliert.',
  invoiceNumber: 'Rechnungsnummer',
  period: 'Zeitraum',
  amount: 'Betrag',
  creditNote: 'Gutschrift',
  credit: 'Gutschrift',
  refund: 'Erstattung',
  range: (from, to) => `${from} bis ${to}`,
  questions: (a) => `Fragen? Schreiben Sie an ${a}.`,
  invoiceSubject: (n, s, total) => `Rechnung ${n}${s ? ` von ${s}` : ''}: ${total}`,
  invoiceHeading: (n) => `Rechnung ${n}`,
  invoiceBody: (n, s, period, total) =>
    `Anbei Ihre Rechnung ${n}${s ? ` von ${s}` : ''} für den Zeitraum ${period}: ${total}.`,
  viewAndPay: 'Rechnung ansehen und bezahlen',
  failedSubject: (n, s, total) => `Zahlung fehlgeschlagen für Rechnung ${n}${s ? ` von ${s}` : ''}: ${total}`,
  failedHeading: (n) => `Zahlung fehlgeschlagen für Rechnung ${n}`,
  failedBody: (n, total, period) => `Wir konnten die Zahlung der Rechnung ${n} (${total}, ${period}) nicht einziehen.`,
  whatFailed: (why) => `Grund: ${why}`,
  updateAndRetry: 'Bitte aktualisieren Sie Ihre Zahlungsmethode; wir versuchen es erneut.',
  checkAndRetry: 'Bitte prüfen Sie Ihre Zahlungsmethode; wir versuchen es erneut.',
  attached: 'Die Rechnung ist beigefügt.',
  updatePaymentMethod: 'Zahlungsmethode aktualisieren',
  viewInvoice: 'Rechnung ansehen',
  noteSubject: (n, s, amount) => `Gutschrift zur Rechnung ${n}${s ? ` von ${s}` : ''}: ${amount}`,
  noteHeading: (n) => `Gutschrift zur Rechnung ${n}`,
  noteBody: {
    credit: (amount, n, period, note) =>
      `Anbei eine Gutschrift über ${amount} zur Rechnung ${n} (${period}) als Gutschrift ${note}.`,
    refund: (amount, n, period, note) =>
      `Anbei eine Erstattung über ${amount} zur Rechnung ${n} (${period}) als Gutschrift ${note}.`,
  },
};

const fr: EmailLabels = {
  testSubject: '[Test] ',
  testBanner: 'E-mail de test : ce client est sur une horloge de test, ses dates sont simulées.',
  invoiceNumber: 'Numéro de facture',
  period: 'Période',
  amount: 'Montant',
  creditNote: 'Avoir',
  credit: 'Crédit',
  refund: 'Remboursement',
  range: (from, to) => `du ${from} au ${to}`,
  questions: (a) => `Des questions ? Écrivez à ${a}.`,
  invoiceSubject: (n, s, total) => `Facture ${n}${s ? ` de ${s}` : ''} : ${total}`,
  invoiceHeading: (n) => `Facture ${n}`,
  invoiceBody: (n, s, period, total) =>
    `Veuillez trouver ci-joint votre facture ${n}${s ? ` de ${s}` : ''} pour la période ${period} : ${total}.`,
  viewAndPay: 'Voir et payer la facture',
  failedSubject: (n, s, total) => `Échec du paiement de la facture ${n}${s ? ` de ${s}` : ''} : ${total}`,
  failedHeading: (n) => `Échec du paiement de la facture ${n}`,
  failedBody: (n, total, period) =>
    `Nous n’avons pas pu encaisser le paiement de la facture ${n} (${total}, ${period}).`,
  whatFailed: (why) => `Motif : ${why}`,
  updateAndRetry: 'Veuillez mettre à jour votre moyen de paiement ; nous réessaierons.',
  checkAndRetry: 'Veuillez vérifier votre moyen de paiement ; nous réessaierons.',
  attached: 'La facture est jointe.',
  updatePaymentMethod: 'Mettre à jour le moyen de paiement',
  viewInvoice: 'Voir la facture',
  noteSubject: (n, s, amount) => `Avoir sur la facture ${n}${s ? ` de ${s}` : ''} : ${amount}`,
  noteHeading: (n) => `Avoir sur la facture ${n}`,
  noteBody: {
    credit: (amount, n, period, note) =>
      `Un crédit de ${amount} sur la facture ${n} (${period}) est joint sous forme de l’avoir ${note}.`,
    refund: (amount, n, period, note) =>
      `Un remboursement de ${amount} sur la facture ${n} (${period}) est joint sous forme de l’avoir ${note}.`,
  },
};

const es: EmailLabels = {
  testSubject: '[Prueba] ',
  testBanner: 'Correo de prueba: este cliente usa un reloj de prueba, sus fechas son simuladas.',
  invoiceNumber: 'Número de factura',
  period: 'Periodo',
  amount: 'Importe',
  creditNote: 'Nota de crédito',
  credit: 'Crédito',
  refund: 'Reembolso',
  range: (from, to) => `del ${from} al ${to}`,
  questions: (a) => `¿Preguntas? Escriba a ${a}.`,
  invoiceSubject: (n, s, total) => `Factura ${n}${s ? ` de ${s}` : ''}: ${total}`,
  invoiceHeading: (n) => `Factura ${n}`,
  invoiceBody: (n, s, period, total) =>
    `Adjuntamos su factura ${n}${s ? ` de ${s}` : ''} del periodo ${period}: ${total}.`,
  viewAndPay: 'Ver y pagar la factura',
  failedSubject: (n, s, total) => `Pago fallido de la factura ${n}${s ? ` de ${s}` : ''}: ${total}`,
  failedHeading: (n) => `Pago fallido de la factura ${n}`,
  failedBody: (n, total, period) => `No pudimos cobrar el pago de la factura ${n} (${total}, ${period}).`,
  whatFailed: (why) => `Motivo: ${why}`,
  updateAndRetry: 'Actualice su método de pago; lo intentaremos de nuevo.',
  checkAndRetry: 'Revise su método de pago; lo intentaremos de nuevo.',
  attached: 'La factura va adjunta.',
  updatePaymentMethod: 'Actualizar el método de pago',
  viewInvoice: 'Ver la factura',
  noteSubject: (n, s, amount) => `Nota de crédito de la factura ${n}${s ? ` de ${s}` : ''}: ${amount}`,
  noteHeading: (n) => `Nota de crédito de la factura ${n}`,
  noteBody: {
    credit: (amount, n, period, note) =>
      `Un crédito de ${amount} sobre la factura ${n} (${period}) va adjunto como nota de crédito ${note}.`,
    refund: (amount, n, period, note) =>
      `Un reembolso de ${amount} sobre la factura ${n} (${period}) va adjunto como nota de crédito ${note}.`,
  },
};

const ja: EmailLabels = {
  testSubject: '[テスト] ',
  testBanner: 'テストメール：このお客様はテストクロック上にあり、日付はシミュレーションです。',
  invoiceNumber: '請求書番号',
  period: '期間',
  amount: '金額',
  creditNote: 'クレジットノート',
  credit: 'クレジット',
  refund: '返金',
  range: (from, to) => `${from}〜${to}`,
  questions: (a) => `ご不明な点は ${a} までお問い合わせください。`,
  invoiceSubject: (n, s, total) => `${s ? `${s}より：` : ''}請求書 ${n}：${total}`,
  invoiceHeading: (n) => `請求書 ${n}`,
  invoiceBody: (n, s, period, total) => `${s ? `${s}より、` : ''}${period}の請求書 ${n}（${total}）を添付いたします。`,
  viewAndPay: '請求書を確認して支払う',
  failedSubject: (n, s, total) => `${s ? `${s}より：` : ''}請求書 ${n} のお支払いに失敗しました：${total}`,
  failedHeading: (n) => `請求書 ${n} のお支払いに失敗しました`,
  failedBody: (n, total, period) => `請求書 ${n}（${total}、${period}）のお支払いを回収できませんでした。`,
  whatFailed: (why) => `失敗の理由：${why}`,
  updateAndRetry: 'お支払い方法を更新してください。改めて請求いたします。',
  checkAndRetry: 'お支払い方法をご確認ください。改めて請求いたします。',
  attached: '請求書を添付しております。',
  updatePaymentMethod: 'お支払い方法を更新する',
  viewInvoice: '請求書を見る',
  noteSubject: (n, s, amount) => `${s ? `${s}より：` : ''}請求書 ${n} のクレジットノート：${amount}`,
  noteHeading: (n) => `請求書 ${n} のクレジットノート`,
  noteBody: {
    credit: (amount, n, period, note) =>
      `請求書 ${n}（${period}）に対するクレジット ${amount} を、クレジットノート ${note} として添付いたします。`,
    refund: (amount, n, period, note) =>
      `請求書 ${n}（${period}）に対する返金 ${amount} を、クレジットノート ${note} として添付いたします。`,
  },
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const EMAIL_LABELS: Record<Locale, EmailLabels> = { en, de, fr, es, ja };
