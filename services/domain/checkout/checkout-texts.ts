import type { BillingInterval, CouponDuration } from '../../../shared/vocabulary.js';
import type { Locale } from '../invoices/invoice-texts.js';

/**
 * The hosted checkout page's fixed texts (services/control/checkout/page-html.ts) and its script's messages
 * (`script`, passed to checkout.js as a JSON data- attribute: the CSP allows no inline script; `{status}` is filled
 * in there), one table per language (docs/checkout.md "Language"). Amounts are formatted by invoiceTexts (Intl).
 * `en` says what the page always said. A slot filled with HTML (the plan's name in a span) is escaped by the page.
 */
export interface CheckoutLabels {
  checkout: string;
  subscribeTo: (plan: string) => string;
  forEmail: (email: string) => string;
  product: string;
  price: string;
  per: Record<BillingInterval, string>;
  every: Record<BillingInterval, (count: string) => string>;
  billedByUsage: string;
  trial: (days: string) => string;
  percentOff: (percent: string) => string;
  amountOff: (amount: string) => string;
  durations: Record<CouponDuration, string>;
  discount: (name: string, off: string, duration: string) => string;
  promotionCode: string;
  card: string;
  subscribe: string;
  noCardEntry: string;
  chargeNote: string;
  cancel: string;
  doneTitle: string;
  complete: string;
  continue: string;
  expiredTitle: string;
  expired: string;
  goBack: string;
  script: {
    failedStatus: string;
    checkingCard: string;
    subscribing: string;
    subscribed: string;
    /** A refused Subscribe, by the problem's code (the page's JSON stays English). */
    refusals: Record<
      | 'checkout_session_expired'
      | 'promotion_code_invalid'
      | 'promotion_code_inactive'
      | 'promotion_code_expired'
      | 'promotion_code_first_time_only'
      | 'promotion_code_exhausted',
      string
    >;
  };
}

const en: CheckoutLabels = {
  checkout: 'Checkout',
  subscribeTo: (plan) => `Subscribe to ${plan}`,
  forEmail: (email) => `For ${email}`,
  product: 'Product',
  price: 'Price',
  per: { day: 'per day', week: 'per week', month: 'per month', quarter: 'per quarter', year: 'per year' },
  every: {
    day: (n) => `every ${n} days`,
    week: (n) => `every ${n} weeks`,
    month: (n) => `every ${n} months`,
    quarter: (n) => `every ${n} quarters`,
    year: (n) => `every ${n} years`,
  },
  billedByUsage: 'billed by usage',
  trial: (days) => `Free for ${days} days; the first invoice comes after the trial.`,
  percentOff: (p) => `${p} % off`,
  amountOff: (a) => `${a} off`,
  durations: { once: 'once', repeating: 'repeating', forever: 'forever' },
  discount: (name, off, duration) => `Discount ${name}: ${off} (${duration}).`,
  promotionCode: 'Promotion code',
  card: 'Card',
  subscribe: 'Subscribe',
  noCardEntry: 'This deployment takes no card on this page.',
  chargeNote:
    'Your card is charged by the first invoice of this subscription. Its number goes to the payment processor only.',
  cancel: 'Cancel and go back',
  doneTitle: 'You are subscribed',
  complete: 'This checkout is complete.',
  continue: 'Continue',
  expiredTitle: 'This checkout expired',
  expired: 'Nothing was charged. Ask the sender for a new link.',
  goBack: 'Go back',
  script: {
    failedStatus: 'Something went wrong ({status}). Nothing was charged.',
    checkingCard: 'Checking the card…',
    subscribing: 'Subscribing…',
    subscribed: 'Subscribed. Thank you.',
    refusals: {
      checkout_session_expired: 'This checkout expired. Nothing was charged.',
      promotion_code_invalid: 'This promotion code does not exist.',
      promotion_code_inactive: 'This promotion code is no longer active.',
      promotion_code_expired: 'This promotion code has expired.',
      promotion_code_first_time_only: 'This promotion code is for first-time customers only.',
      promotion_code_exhausted: 'This promotion code has been used up.',
    },
  },
};

const de: CheckoutLabels = {
  checkout: 'Bestellung',
  subscribeTo: (plan) => `${plan} abonnieren`,
  forEmail: (email) => `Für ${email}`,
  product: 'Produkt',
  price: 'Preis',
  per: { day: 'pro Tag', week: 'pro Woche', month: 'pro Monat', quarter: 'pro Quartal', year: 'pro Jahr' },
  every: {
    day: (n) => `alle ${n} Tage`,
    week: (n) => `alle ${n} Wochen`,
    month: (n) => `alle ${n} Monate`,
    quarter: (n) => `alle ${n} Quartale`,
    year: (n) => `alle ${n} Jahre`,
  },
  billedByUsage: 'nach Nutzung berechnet',
  trial: (days) => `${days} Tage kostenlos; die erste Rechnung folgt nach dem Testzeitraum.`,
  percentOff: (p) => `${p} % Rabatt`,
  amountOff: (a) => `${a} Rabatt`,
  durations: { once: 'einmalig', repeating: 'wiederkehrend', forever: 'dauerhaft' },
  discount: (name, off, duration) => `Rabatt ${name}: ${off} (${duration}).`,
  promotionCode: 'Aktionscode',
  card: 'Karte',
  subscribe: 'Abonnieren',
  noCardEntry: 'Auf dieser Seite wird keine Karte angenommen.',
  chargeNote:
    'Ihre Karte wird mit der ersten Rechnung dieses Abonnements belastet. Ihre Nummer erhält nur der Zahlungsdienstleister.',
  cancel: 'Abbrechen und zurück',
  doneTitle: 'Sie haben abonniert',
  complete: 'Diese Bestellung ist abgeschlossen.',
  continue: 'Weiter',
  expiredTitle: 'Diese Bestellung ist abgelaufen',
  expired: 'Es wurde nichts belastet. Bitten Sie den Absender um einen neuen Link.',
  goBack: 'Zurück',
  script: {
    failedStatus: 'Etwas ist schiefgelaufen ({status}). Es wurde nichts belastet.',
    checkingCard: 'Karte wird geprüft …',
    subscribing: 'Abonnement wird abgeschlossen …',
    subscribed: 'Abonniert. Vielen Dank.',
    refusals: {
      checkout_session_expired: 'Diese Bestellung ist abgelaufen. Es wurde nichts belastet.',
      promotion_code_invalid: 'Diesen Aktionscode gibt es nicht.',
      promotion_code_inactive: 'Dieser Aktionscode ist nicht mehr aktiv.',
      promotion_code_expired: 'Dieser Aktionscode ist abgelaufen.',
      promotion_code_first_time_only: 'Dieser Aktionscode gilt nur für Neukunden.',
      promotion_code_exhausted: 'Dieser Aktionscode ist aufgebraucht.',
    },
  },
};

const fr: CheckoutLabels = {
  checkout: 'Paiement',
  subscribeTo: (plan) => `S’abonner à ${plan}`,
  forEmail: (email) => `Pour ${email}`,
  product: 'Produit',
  price: 'Prix',
  per: { day: 'par jour', week: 'par semaine', month: 'par mois', quarter: 'par trimestre', year: 'par an' },
  every: {
    day: (n) => `tous les ${n} jours`,
    week: (n) => `toutes les ${n} semaines`,
    month: (n) => `tous les ${n} mois`,
    quarter: (n) => `tous les ${n} trimestres`,
    year: (n) => `tous les ${n} ans`,
  },
  billedByUsage: 'facturé à l’usage',
  trial: (days) => `Gratuit pendant ${days} jours ; la première facture arrive après l’essai.`,
  percentOff: (p) => `${p} % de remise`,
  amountOff: (a) => `${a} de remise`,
  durations: { once: 'une fois', repeating: 'récurrente', forever: 'permanente' },
  discount: (name, off, duration) => `Remise ${name} : ${off} (${duration}).`,
  promotionCode: 'Code promotionnel',
  card: 'Carte',
  subscribe: 'S’abonner',
  noCardEntry: 'Ce service ne prend pas de carte sur cette page.',
  chargeNote:
    'Votre carte est débitée par la première facture de cet abonnement. Son numéro ne va qu’au prestataire de paiement.',
  cancel: 'Annuler et revenir',
  doneTitle: 'Vous êtes abonné',
  complete: 'Ce paiement est terminé.',
  continue: 'Continuer',
  expiredTitle: 'Ce paiement a expiré',
  expired: 'Rien n’a été débité. Demandez un nouveau lien à l’expéditeur.',
  goBack: 'Revenir',
  script: {
    failedStatus: 'Une erreur est survenue ({status}). Rien n’a été débité.',
    checkingCard: 'Vérification de la carte…',
    subscribing: 'Abonnement en cours…',
    subscribed: 'Abonné. Merci.',
    refusals: {
      checkout_session_expired: 'Ce paiement a expiré. Rien n’a été débité.',
      promotion_code_invalid: 'Ce code promotionnel n’existe pas.',
      promotion_code_inactive: 'Ce code promotionnel n’est plus actif.',
      promotion_code_expired: 'Ce code promotionnel a expiré.',
      promotion_code_first_time_only: 'Ce code promotionnel est réservé aux nouveaux clients.',
      promotion_code_exhausted: 'Ce code promotionnel a atteint son nombre d’utilisations.',
    },
  },
};

const es: CheckoutLabels = {
  checkout: 'Pago',
  subscribeTo: (plan) => `Suscribirse a ${plan}`,
  forEmail: (email) => `Para ${email}`,
  product: 'Producto',
  price: 'Precio',
  per: { day: 'al día', week: 'a la semana', month: 'al mes', quarter: 'al trimestre', year: 'al año' },
  every: {
    day: (n) => `cada ${n} días`,
    week: (n) => `cada ${n} semanas`,
    month: (n) => `cada ${n} meses`,
    quarter: (n) => `cada ${n} trimestres`,
    year: (n) => `cada ${n} años`,
  },
  billedByUsage: 'facturado por consumo',
  trial: (days) => `Gratis durante ${days} días; la primera factura llega después de la prueba.`,
  percentOff: (p) => `${p} % de descuento`,
  amountOff: (a) => `${a} de descuento`,
  durations: { once: 'una vez', repeating: 'recurrente', forever: 'permanente' },
  discount: (name, off, duration) => `Descuento ${name}: ${off} (${duration}).`,
  promotionCode: 'Código promocional',
  card: 'Tarjeta',
  subscribe: 'Suscribirse',
  noCardEntry: 'Este servicio no acepta tarjetas en esta página.',
  chargeNote:
    'Su tarjeta se cobra con la primera factura de esta suscripción. Su número solo lo recibe el procesador de pagos.',
  cancel: 'Cancelar y volver',
  doneTitle: 'Ya está suscrito',
  complete: 'Este pago se ha completado.',
  continue: 'Continuar',
  expiredTitle: 'Este pago ha caducado',
  expired: 'No se ha cobrado nada. Pida un enlace nuevo al remitente.',
  goBack: 'Volver',
  script: {
    failedStatus: 'Algo salió mal ({status}). No se ha cobrado nada.',
    checkingCard: 'Comprobando la tarjeta…',
    subscribing: 'Suscribiendo…',
    subscribed: 'Suscrito. Gracias.',
    refusals: {
      checkout_session_expired: 'Este pago ha caducado. No se ha cobrado nada.',
      promotion_code_invalid: 'Este código promocional no existe.',
      promotion_code_inactive: 'Este código promocional ya no está activo.',
      promotion_code_expired: 'Este código promocional ha caducado.',
      promotion_code_first_time_only: 'Este código promocional es solo para clientes nuevos.',
      promotion_code_exhausted: 'Este código promocional ya se ha agotado.',
    },
  },
};

const ja: CheckoutLabels = {
  checkout: 'お申し込み',
  subscribeTo: (plan) => `${plan}に申し込む`,
  forEmail: (email) => `${email} 様`,
  product: '商品',
  price: '料金',
  per: { day: '1日あたり', week: '1週間あたり', month: '1か月あたり', quarter: '四半期あたり', year: '1年あたり' },
  every: {
    day: (n) => `${n}日ごと`,
    week: (n) => `${n}週間ごと`,
    month: (n) => `${n}か月ごと`,
    quarter: (n) => `${n}四半期ごと`,
    year: (n) => `${n}年ごと`,
  },
  billedByUsage: '従量課金',
  trial: (days) => `${days}日間無料。最初の請求書はお試し期間の終了後に発行されます。`,
  percentOff: (p) => `${p}%割引`,
  amountOff: (a) => `${a}割引`,
  durations: { once: '1回のみ', repeating: '複数回', forever: '継続' },
  discount: (name, off, duration) => `割引 ${name}：${off}（${duration}）`,
  promotionCode: 'プロモーションコード',
  card: 'カード',
  subscribe: '申し込む',
  noCardEntry: 'このページではカードを受け付けていません。',
  chargeNote: 'このサブスクリプションの最初の請求書でカードに請求されます。カード番号は決済代行会社にのみ送られます。',
  cancel: 'キャンセルして戻る',
  doneTitle: 'お申し込みが完了しました',
  complete: 'このお申し込みは完了しています。',
  continue: '次へ',
  expiredTitle: 'このお申し込みは有効期限が切れています',
  expired: '請求は行われていません。送信元に新しいリンクをご依頼ください。',
  goBack: '戻る',
  script: {
    failedStatus: 'エラーが発生しました（{status}）。請求は行われていません。',
    checkingCard: 'カードを確認しています…',
    subscribing: 'お申し込み処理中…',
    subscribed: 'お申し込みが完了しました。ありがとうございました。',
    refusals: {
      checkout_session_expired: 'このお申し込みは有効期限が切れています。請求は行われていません。',
      promotion_code_invalid: 'このプロモーションコードは存在しません。',
      promotion_code_inactive: 'このプロモーションコードは現在無効です。',
      promotion_code_expired: 'このプロモーションコードは有効期限が切れています。',
      promotion_code_first_time_only: 'このプロモーションコードは初回のお客様専用です。',
      promotion_code_exhausted: 'このプロモーションコードは利用上限に達しました。',
    },
  },
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const CHECKOUT_LABELS: Record<Locale, CheckoutLabels> = { en, de, fr, es, ja };
