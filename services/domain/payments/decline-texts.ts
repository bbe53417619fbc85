import type { Locale } from '../invoices/invoice-texts.js';

/**
 * What the hosted invoice, card and checkout pages and the payment-failed email tell a customer whose card was
 * refused, in its language: chosen by the processor's decline code, then its error code (Stripe's `decline_code` /
 * `code`, meterline's failure codes of services/domain/billing/payment-outcomes.ts), else `declined`. Lost, stolen or
 * fraud declines fall to `declined` on purpose (Stripe's advice: never tell them apart). The pages' scripts do the
 * choosing in the browser (services/control/hosted/decline-script.ts: Stripe.js's errors exist there only), the email
 * through `declineText`; the API's problems stay English.
 */
export const DECLINE_CODES = [
  'card_declined',
  'insufficient_funds',
  'expired_card',
  'incorrect_cvc',
  'incorrect_number',
  'processing_error',
  'authentication_required',
  'card_not_supported',
  'currency_not_supported',
  'card_velocity_exceeded',
  'no_payment_method',
] as const;

export type DeclineLabels = Record<(typeof DECLINE_CODES)[number] | 'declined', string>;

const en: DeclineLabels = {
  card_declined: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  expired_card: 'Your card has expired.',
  incorrect_cvc: 'Your card’s security code is incorrect.',
  incorrect_number: 'Your card number is incorrect.',
  processing_error: 'An error occurred while processing your card. Try again in a moment.',
  authentication_required: 'Your bank asks you to authenticate this payment.',
  card_not_supported: 'Your card does not support this kind of payment.',
  currency_not_supported: 'Your card does not support this currency.',
  card_velocity_exceeded: 'Your card has reached its limit. Try another card.',
  no_payment_method: 'No card is on file.',
  declined: 'The payment was declined.',
};

const de: DeclineLabels = {
  card_declined: 'Ihre Karte wurde abgelehnt.',
  insufficient_funds: 'Ihre Karte ist nicht ausreichend gedeckt.',
  expired_card: 'Ihre Karte ist abgelaufen.',
  incorrect_cvc: 'Die Prüfnummer Ihrer Karte ist falsch.',
  incorrect_number: 'Ihre Kartennummer ist falsch.',
  processing_error: 'Bei der Verarbeitung Ihrer Karte ist ein Fehler aufgetreten. Versuchen Sie es gleich noch einmal.',
  authentication_required: 'Ihre Bank bittet Sie, diese Zahlung zu authentifizieren.',
  card_not_supported: 'Ihre Karte unterstützt diese Art von Zahlung nicht.',
  currency_not_supported: 'Ihre Karte unterstützt diese Währung nicht.',
  card_velocity_exceeded: 'Das Limit Ihrer Karte ist erreicht. Verwenden Sie eine andere Karte.',
  no_payment_method: 'Es ist keine Karte hinterlegt.',
  declined: 'Die Zahlung wurde abgelehnt.',
};

const fr: DeclineLabels = {
  card_declined: 'Votre carte a été refusée.',
  insufficient_funds: 'Le solde de votre carte est insuffisant.',
  expired_card: 'Votre carte a expiré.',
  incorrect_cvc: 'Le code de sécurité de votre carte est incorrect.',
  incorrect_number: 'Le numéro de votre carte est incorrect.',
  processing_error: 'Une erreur est survenue lors du traitement de votre carte. Réessayez dans un instant.',
  authentication_required: 'Votre banque vous demande d’authentifier ce paiement.',
  card_not_supported: 'Votre carte ne permet pas ce type de paiement.',
  currency_not_supported: 'Votre carte ne permet pas de payer dans cette devise.',
  card_velocity_exceeded: 'Votre carte a atteint son plafond. Essayez une autre carte.',
  no_payment_method: 'Aucune carte n’est enregistrée.',
  declined: 'Le paiement a été refusé.',
};

const es: DeclineLabels = {
  card_declined: 'Su tarjeta ha sido rechazada.',
  insufficient_funds: 'Su tarjeta no tiene fondos suficientes.',
  expired_card: 'Su tarjeta ha caducado.',
  incorrect_cvc: 'El código de seguridad de su tarjeta es incorrecto.',
  incorrect_number: 'El número de su tarjeta es incorrecto.',
  processing_error: 'Se ha producido un error al procesar su tarjeta. Inténtelo de nuevo en un momento.',
  authentication_required: 'Su banco le pide autenticar este pago.',
  card_not_supported: 'Su tarjeta no admite este tipo de pago.',
  currency_not_supported: 'Su tarjeta no admite esta moneda.',
  card_velocity_exceeded: 'Su tarjeta ha alcanzado su límite. Pruebe con otra tarjeta.',
  no_payment_method: 'No hay ninguna tarjeta registrada.',
  declined: 'El pago ha sido rechazado.',
};

const ja: DeclineLabels = {
  card_declined: 'カードが拒否されました。',
  insufficient_funds: 'カードの残高が不足しています。',
  expired_card: 'カードの有効期限が切れています。',
  incorrect_cvc: 'カードのセキュリティコードが正しくありません。',
  incorrect_number: 'カード番号が正しくありません。',
  processing_error: 'カードの処理中にエラーが発生しました。しばらくしてからもう一度お試しください。',
  authentication_required: 'ご利用の銀行がこのお支払いの認証を求めています。',
  card_not_supported: 'このカードはこの種類のお支払いに対応していません。',
  currency_not_supported: 'このカードはこの通貨に対応していません。',
  card_velocity_exceeded: 'カードの利用限度額に達しました。別のカードをお試しください。',
  no_payment_method: '登録済みのカードがありません。',
  declined: 'お支払いが拒否されました。',
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const DECLINE_LABELS: Record<Locale, DeclineLabels> = { en, de, fr, es, ja };

/** The text of a refusal in a language: its first code that has one (decline code, then error code), else `declined`. */
export function declineText(locale: Locale, ...codes: (string | null | undefined)[]): string {
  const labels = DECLINE_LABELS[locale];
  for (const code of codes) if (code && Object.hasOwn(labels, code)) return labels[code as keyof DeclineLabels];
  return labels.declined;
}
