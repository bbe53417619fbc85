import type { Locale } from '../invoices/invoice-texts.js';

/**
 * The fixed texts of the hosted invoice and card pages (services/control/hosted/) and of their script, one table
 * per language of the customer's `locale`; amounts and dates are formatted by the invoice texts
 * (services/domain/invoices/invoice-texts.ts). `en` says what the pages always said. `script` reaches pay.js as a
 * JSON data- attribute (the CSP allows no inline script); `{status}` and `{card}` are filled in there.
 */
export interface PageLabels {
  statuses: Record<'draft' | 'open' | 'paid' | 'uncollectible' | 'void', string>;
  invoice: string;
  invoiceTitle: (number: string) => string;
  taxId: (id: string) => string;
  issued: (day: string) => string;
  due: (day: string) => string;
  period: (from: string, to: string) => string;
  billedTo: string;
  reference: (reference: string) => string;
  description: string;
  quantity: string;
  unitPrice: string;
  amount: string;
  subtotal: string;
  tax: string;
  reverseCharge: string;
  total: string;
  credited: string;
  amountDue: string;
  downloadPdf: string;
  paidThanks: string;
  paidOnThanks: (day: string) => string;
  payThisInvoice: string;
  payWithSaved: (amount: string, card: string) => string;
  authenticateAndPay: (amount: string, card: string) => string;
  awaitingNote: string;
  orNewCard: string;
  payWithCard: string;
  pay: (amount: string) => string;
  newCardNote: string;
  noCard: string;
  cardTitle: string;
  paymentMethod: string;
  updateOf: string;
  defaultCard: (card: string) => string;
  noCardYet: string;
  saveCard: string;
  noCardEntry: string;
  cardPageNote: string;
  /** 410: a link that existed (revoked, replaced or expired); 404: no such link. */
  linkGone: { title: string; message: string };
  linkUnknown: { title: string; message: string };
  script: {
    failedStatus: string;
    paid: string;
    notComplete: string;
    authenticate: string;
    confirming: string;
    paying: string;
    checkingCard: string;
    saved: string;
    defaultCard: string;
    nothingCharged: string;
    /** An attempt still open, by its code (services/control/hosted/payment-answer.ts OpenReason). */
    open: Record<'payment_pending' | 'authentication_unavailable' | 'authentication_incomplete', string>;
  };
}

const en: PageLabels = {
  statuses: { open: 'Open', paid: 'Paid', uncollectible: 'Past due', void: 'Void', draft: 'Draft' },
  invoice: 'Invoice',
  invoiceTitle: (n) => `Invoice ${n}`,
  taxId: (id) => `Tax ID ${id}`,
  issued: (d) => `Issued ${d}`,
  due: (d) => `due ${d}`,
  period: (from, to) => `Period ${from} – ${to}`,
  billedTo: 'Billed to',
  reference: (r) => `Reference ${r}`,
  description: 'Description',
  quantity: 'Quantity',
  unitPrice: 'Unit price',
  amount: 'Amount',
  subtotal: 'Subtotal',
  tax: 'Tax',
  reverseCharge: ' (reverse charge)',
  total: 'Total',
  credited: 'Credited',
  amountDue: 'Amount due',
  downloadPdf: 'Download the PDF',
  paidThanks: 'Paid. Thank you.',
  paidOnThanks: (d) => `Paid on ${d}. Thank you.`,
  payThisInvoice: 'Pay this invoice',
  payWithSaved: (amount, card) => `Pay ${amount} with ${card}`,
  authenticateAndPay: (amount, card) => `Authenticate and pay ${amount} with ${card}`,
  awaitingNote: 'Your bank asks you to confirm this payment (3-D Secure).',
  orNewCard: 'Or pay with a new card',
  payWithCard: 'Pay with a card',
  pay: (amount) => `Pay ${amount}`,
  newCardNote:
    'The card is saved as your default card for later invoices. Its number goes to the payment processor only.',
  noCard: 'No card is on file. Contact the sender to pay this invoice.',
  cardTitle: 'Update your payment method',
  paymentMethod: 'Payment method',
  updateOf: 'Update the payment method of',
  defaultCard: (card) => `Your default card: ${card}`,
  noCardYet: 'No card on file yet.',
  saveCard: 'Save card',
  noCardEntry: 'This deployment takes no card on this page.',
  cardPageNote:
    'The new card becomes your default card for later invoices. Its number goes to the payment processor only.',
  linkGone: {
    title: 'This link no longer works',
    message: 'It was revoked or replaced by a newer one, or it expired. Ask the sender for a new link.',
  },
  linkUnknown: {
    title: 'Page not found',
    message: 'This link does not lead to an invoice or a card page. Check that it was copied whole.',
  },
  script: {
    failedStatus: 'Something went wrong ({status}). Nothing was charged.',
    paid: 'Paid. Thank you.',
    notComplete: 'The payment is not complete.',
    authenticate: 'Your bank asks you to authenticate this payment.',
    confirming: 'Your bank asks you to confirm this payment…',
    paying: 'Paying…',
    checkingCard: 'Checking the card…',
    saved: 'Saved: {card} is now your default card.',
    defaultCard: 'Your default card: {card}',
    nothingCharged: 'Nothing was charged.',
    open: {
      payment_pending: 'A payment of this invoice is in progress. Reload in a moment.',
      authentication_unavailable: 'The bank asks for authentication, which this page cannot run.',
      authentication_incomplete: 'The payment is not complete: authenticate it with your bank.',
    },
  },
};

const de: PageLabels = {
  statuses: { open: 'Offen', paid: 'Bezahlt', uncollectible: 'Überfällig', void: 'Storniert', draft: 'Entwurf' },
  invoice: 'Rechnung',
  invoiceTitle: (n) => `Rechnung ${n}`,
  taxId: (id) => `USt-IdNr. ${id}`,
  issued: (d) => `Rechnungsdatum ${d}`,
  due: (d) => `fällig am ${d}`,
  period: (from, to) => `Zeitraum ${from} – ${to}`,
  billedTo: 'Rechnung an',
  reference: (r) => `Referenz ${r}`,
  description: 'Beschreibung',
  quantity: 'Menge',
  unitPrice: 'Einzelpreis',
  amount: 'Betrag',
  subtotal: 'Zwischensumme',
  tax: 'Steuer',
  reverseCharge: ' (Steuerschuldnerschaft des Leistungsempfängers)',
  total: 'Gesamtbetrag',
  credited: 'Gutgeschrieben',
  amountDue: 'Offener Betrag',
  downloadPdf: 'PDF herunterladen',
  paidThanks: 'Bezahlt. Vielen Dank.',
  paidOnThanks: (d) => `Bezahlt am ${d}. Vielen Dank.`,
  payThisInvoice: 'Diese Rechnung bezahlen',
  payWithSaved: (amount, card) => `${amount} mit ${card} bezahlen`,
  authenticateAndPay: (amount, card) => `Bestätigen und ${amount} mit ${card} bezahlen`,
  awaitingNote: 'Ihre Bank bittet Sie, diese Zahlung zu bestätigen (3-D Secure).',
  orNewCard: 'Oder mit einer neuen Karte bezahlen',
  payWithCard: 'Mit Karte bezahlen',
  pay: (amount) => `${amount} bezahlen`,
  newCardNote:
    'Die Karte wird als Standardkarte für spätere Rechnungen gespeichert. Ihre Nummer erhält nur der Zahlungsdienstleister.',
  noCard: 'Keine Karte hinterlegt. Wenden Sie sich an den Absender, um diese Rechnung zu bezahlen.',
  cardTitle: 'Zahlungsmethode aktualisieren',
  paymentMethod: 'Zahlungsmethode',
  updateOf: 'Zahlungsmethode aktualisieren für',
  defaultCard: (card) => `Ihre Standardkarte: ${card}`,
  noCardYet: 'Noch keine Karte hinterlegt.',
  saveCard: 'Karte speichern',
  noCardEntry: 'Auf dieser Seite wird keine Karte angenommen.',
  cardPageNote:
    'Die neue Karte wird Ihre Standardkarte für spätere Rechnungen. Ihre Nummer erhält nur der Zahlungsdienstleister.',
  linkGone: {
    title: 'Dieser Link funktioniert nicht mehr',
    message:
      'Er wurde widerrufen, durch einen neueren ersetzt oder ist abgelaufen. Bitten Sie den Absender um einen neuen Link.',
  },
  linkUnknown: {
    title: 'Seite nicht gefunden',
    message:
      'Dieser Link führt zu keiner Rechnung und keiner Kartenseite. Prüfen Sie, ob er vollständig kopiert wurde.',
  },
  script: {
    failedStatus: 'Etwas ist schiefgelaufen ({status}). Es wurde nichts belastet.',
    paid: 'Bezahlt. Vielen Dank.',
    notComplete: 'Die Zahlung ist nicht abgeschlossen.',
    authenticate: 'Ihre Bank bittet Sie, diese Zahlung zu authentifizieren.',
    confirming: 'Ihre Bank bittet Sie, diese Zahlung zu bestätigen …',
    paying: 'Zahlung läuft …',
    checkingCard: 'Karte wird geprüft …',
    saved: 'Gespeichert: {card} ist jetzt Ihre Standardkarte.',
    defaultCard: 'Ihre Standardkarte: {card}',
    nothingCharged: 'Es wurde nichts belastet.',
    open: {
      payment_pending: 'Eine Zahlung dieser Rechnung läuft bereits. Laden Sie die Seite gleich neu.',
      authentication_unavailable: 'Ihre Bank verlangt eine Authentifizierung, die diese Seite nicht durchführen kann.',
      authentication_incomplete: 'Die Zahlung ist nicht abgeschlossen: Bestätigen Sie sie bei Ihrer Bank.',
    },
  },
};

const fr: PageLabels = {
  statuses: { open: 'Ouverte', paid: 'Payée', uncollectible: 'En retard', void: 'Annulée', draft: 'Brouillon' },
  invoice: 'Facture',
  invoiceTitle: (n) => `Facture ${n}`,
  taxId: (id) => `N° de TVA ${id}`,
  issued: (d) => `Émise le ${d}`,
  due: (d) => `échéance le ${d}`,
  period: (from, to) => `Période du ${from} au ${to}`,
  billedTo: 'Facturé à',
  reference: (r) => `Référence ${r}`,
  description: 'Description',
  quantity: 'Quantité',
  unitPrice: 'Prix unitaire',
  amount: 'Montant',
  subtotal: 'Sous-total',
  tax: 'TVA',
  reverseCharge: ' (autoliquidation)',
  total: 'Total',
  credited: 'Crédité',
  amountDue: 'Montant dû',
  downloadPdf: 'Télécharger le PDF',
  paidThanks: 'Payée. Merci.',
  paidOnThanks: (d) => `Payée le ${d}. Merci.`,
  payThisInvoice: 'Payer cette facture',
  payWithSaved: (amount, card) => `Payer ${amount} avec ${card}`,
  authenticateAndPay: (amount, card) => `S’authentifier et payer ${amount} avec ${card}`,
  awaitingNote: 'Votre banque vous demande de confirmer ce paiement (3-D Secure).',
  orNewCard: 'Ou payer avec une nouvelle carte',
  payWithCard: 'Payer par carte',
  pay: (amount) => `Payer ${amount}`,
  newCardNote:
    'La carte est enregistrée comme carte par défaut pour les prochaines factures. Son numéro ne va qu’au prestataire de paiement.',
  noCard: 'Aucune carte enregistrée. Contactez l’expéditeur pour payer cette facture.',
  cardTitle: 'Mettre à jour votre moyen de paiement',
  paymentMethod: 'Moyen de paiement',
  updateOf: 'Mettre à jour le moyen de paiement de',
  defaultCard: (card) => `Votre carte par défaut : ${card}`,
  noCardYet: 'Aucune carte enregistrée pour l’instant.',
  saveCard: 'Enregistrer la carte',
  noCardEntry: 'Ce service ne prend pas de carte sur cette page.',
  cardPageNote:
    'La nouvelle carte devient votre carte par défaut pour les prochaines factures. Son numéro ne va qu’au prestataire de paiement.',
  linkGone: {
    title: 'Ce lien ne fonctionne plus',
    message:
      'Il a été révoqué, remplacé par un lien plus récent, ou il a expiré. Demandez un nouveau lien à l’expéditeur.',
  },
  linkUnknown: {
    title: 'Page introuvable',
    message: 'Ce lien ne mène ni à une facture ni à une page de carte. Vérifiez qu’il a été copié en entier.',
  },
  script: {
    failedStatus: 'Une erreur est survenue ({status}). Rien n’a été débité.',
    paid: 'Payée. Merci.',
    notComplete: 'Le paiement n’est pas terminé.',
    authenticate: 'Votre banque vous demande d’authentifier ce paiement.',
    confirming: 'Votre banque vous demande de confirmer ce paiement…',
    paying: 'Paiement en cours…',
    checkingCard: 'Vérification de la carte…',
    saved: 'Enregistrée : {card} est désormais votre carte par défaut.',
    defaultCard: 'Votre carte par défaut : {card}',
    nothingCharged: 'Rien n’a été débité.',
    open: {
      payment_pending: 'Un paiement de cette facture est en cours. Rechargez la page dans un instant.',
      authentication_unavailable: 'Votre banque demande une authentification que cette page ne peut pas effectuer.',
      authentication_incomplete: 'Le paiement n’est pas terminé : authentifiez-le auprès de votre banque.',
    },
  },
};

const es: PageLabels = {
  statuses: { open: 'Abierta', paid: 'Pagada', uncollectible: 'Vencida', void: 'Anulada', draft: 'Borrador' },
  invoice: 'Factura',
  invoiceTitle: (n) => `Factura ${n}`,
  taxId: (id) => `NIF ${id}`,
  issued: (d) => `Emitida el ${d}`,
  due: (d) => `vence el ${d}`,
  period: (from, to) => `Periodo del ${from} al ${to}`,
  billedTo: 'Facturado a',
  reference: (r) => `Referencia ${r}`,
  description: 'Descripción',
  quantity: 'Cantidad',
  unitPrice: 'Precio unitario',
  amount: 'Importe',
  subtotal: 'Subtotal',
  tax: 'Impuestos',
  reverseCharge: ' (inversión del sujeto pasivo)',
  total: 'Total',
  credited: 'Abonado',
  amountDue: 'Importe pendiente',
  downloadPdf: 'Descargar el PDF',
  paidThanks: 'Pagada. Gracias.',
  paidOnThanks: (d) => `Pagada el ${d}. Gracias.`,
  payThisInvoice: 'Pagar esta factura',
  payWithSaved: (amount, card) => `Pagar ${amount} con ${card}`,
  authenticateAndPay: (amount, card) => `Autenticar y pagar ${amount} con ${card}`,
  awaitingNote: 'Su banco le pide confirmar este pago (3-D Secure).',
  orNewCard: 'O pagar con una tarjeta nueva',
  payWithCard: 'Pagar con tarjeta',
  pay: (amount) => `Pagar ${amount}`,
  newCardNote:
    'La tarjeta se guarda como predeterminada para próximas facturas. Su número solo lo recibe el procesador de pagos.',
  noCard: 'No hay ninguna tarjeta registrada. Contacte con el remitente para pagar esta factura.',
  cardTitle: 'Actualizar su método de pago',
  paymentMethod: 'Método de pago',
  updateOf: 'Actualizar el método de pago de',
  defaultCard: (card) => `Su tarjeta predeterminada: ${card}`,
  noCardYet: 'Todavía no hay ninguna tarjeta registrada.',
  saveCard: 'Guardar tarjeta',
  noCardEntry: 'Este servicio no acepta tarjetas en esta página.',
  cardPageNote:
    'La nueva tarjeta pasa a ser su tarjeta predeterminada para próximas facturas. Su número solo lo recibe el procesador de pagos.',
  linkGone: {
    title: 'Este enlace ya no funciona',
    message: 'Se revocó, se sustituyó por uno más reciente o caducó. Pida un enlace nuevo al remitente.',
  },
  linkUnknown: {
    title: 'Página no encontrada',
    message: 'Este enlace no lleva a ninguna factura ni página de tarjeta. Compruebe que se copió completo.',
  },
  script: {
    failedStatus: 'Algo salió mal ({status}). No se ha cobrado nada.',
    paid: 'Pagada. Gracias.',
    notComplete: 'El pago no se ha completado.',
    authenticate: 'Su banco le pide autenticar este pago.',
    confirming: 'Su banco le pide confirmar este pago…',
    paying: 'Pagando…',
    checkingCard: 'Comprobando la tarjeta…',
    saved: 'Guardada: {card} es ahora su tarjeta predeterminada.',
    defaultCard: 'Su tarjeta predeterminada: {card}',
    nothingCharged: 'No se ha cobrado nada.',
    open: {
      payment_pending: 'Hay un pago de esta factura en curso. Recargue la página en un momento.',
      authentication_unavailable: 'Su banco pide una autenticación que esta página no puede realizar.',
      authentication_incomplete: 'El pago no se ha completado: autentíquelo con su banco.',
    },
  },
};

const ja: PageLabels = {
  statuses: { open: '未払い', paid: '支払済み', uncollectible: '期限超過', void: '無効', draft: '下書き' },
  invoice: '請求書',
  invoiceTitle: (n) => `請求書 ${n}`,
  taxId: (id) => `登録番号 ${id}`,
  issued: (d) => `発行日 ${d}`,
  due: (d) => `支払期日 ${d}`,
  period: (from, to) => `期間 ${from}〜${to}`,
  billedTo: '請求先',
  reference: (r) => `参照番号 ${r}`,
  description: '内容',
  quantity: '数量',
  unitPrice: '単価',
  amount: '金額',
  subtotal: '小計',
  tax: '税',
  reverseCharge: '（リバースチャージ）',
  total: '合計',
  credited: 'クレジット済み',
  amountDue: '請求残高',
  downloadPdf: 'PDFをダウンロード',
  paidThanks: 'お支払い済みです。ありがとうございました。',
  paidOnThanks: (d) => `${d}にお支払い済みです。ありがとうございました。`,
  payThisInvoice: 'この請求書を支払う',
  payWithSaved: (amount, card) => `${card}で${amount}を支払う`,
  authenticateAndPay: (amount, card) => `認証して${card}で${amount}を支払う`,
  awaitingNote: 'ご利用の銀行がこのお支払いの確認を求めています（3Dセキュア）。',
  orNewCard: 'または新しいカードで支払う',
  payWithCard: 'カードで支払う',
  pay: (amount) => `${amount}を支払う`,
  newCardNote: 'このカードは今後の請求書の既定のカードとして保存されます。カード番号は決済代行会社にのみ送られます。',
  noCard: '登録済みのカードがありません。お支払いについては送信元にお問い合わせください。',
  cardTitle: 'お支払い方法の更新',
  paymentMethod: 'お支払い方法',
  updateOf: 'お支払い方法を更新：',
  defaultCard: (card) => `既定のカード：${card}`,
  noCardYet: 'まだカードが登録されていません。',
  saveCard: 'カードを保存',
  noCardEntry: 'このページではカードを受け付けていません。',
  cardPageNote: '新しいカードが今後の請求書の既定のカードになります。カード番号は決済代行会社にのみ送られます。',
  linkGone: {
    title: 'このリンクは無効になりました',
    message:
      'このリンクは取り消されたか、新しいリンクに置き換えられたか、有効期限が切れています。送信元に新しいリンクをご依頼ください。',
  },
  linkUnknown: {
    title: 'ページが見つかりません',
    message: 'このリンクは請求書やカードのページにつながっていません。リンクが途中で切れていないかご確認ください。',
  },
  script: {
    failedStatus: 'エラーが発生しました（{status}）。請求は行われていません。',
    paid: 'お支払い済みです。ありがとうございました。',
    notComplete: 'お支払いは完了していません。',
    authenticate: 'ご利用の銀行がこのお支払いの認証を求めています。',
    confirming: 'ご利用の銀行がこのお支払いの確認を求めています…',
    paying: 'お支払い処理中…',
    checkingCard: 'カードを確認しています…',
    saved: '保存しました：{card} が既定のカードになりました。',
    defaultCard: '既定のカード：{card}',
    nothingCharged: '請求は行われていません。',
    open: {
      payment_pending: 'この請求書のお支払いを処理中です。しばらくしてから再読み込みしてください。',
      authentication_unavailable: 'ご利用の銀行が認証を求めていますが、このページでは実行できません。',
      authentication_incomplete: 'お支払いは完了していません。ご利用の銀行で認証してください。',
    },
  },
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const PAGE_LABELS: Record<Locale, PageLabels> = { en, de, fr, es, ja };
