import type { Locale } from '../invoices/invoice-texts.js';

/**
 * The fixed texts of the portal's payment methods, credit and entitlements and billing details pages
 * (services/control/portal/), one table per language of the visit (portal-texts.ts `portalLocale`). Amounts and
 * dates are formatted by invoiceTexts (Intl). `en` says what the pages always said.
 */
export interface AccountLabels {
  defaultChanged: string;
  expires: (month: string, year: string) => string;
  defaultCard: string;
  makeDefault: string;
  noCards: string;
  addCard: string;
  newCardNote: string;
  creditBalance: string;
  noCredit: string;
  amountToBuy: string;
  buyCredit: string;
  buyNote: string;
  creditGrants: string;
  date: string;
  description: string;
  granted: string;
  remaining: string;
  expiresColumn: string;
  never: string;
  entitlements: string;
  feature: string;
  thisPeriod: string;
  /** `left` is filled with the balance in bold. */
  usedOf: (used: string, limit: string, left: string) => string;
  included: string;
  notIncluded: string;
  noEntitlements: string;
  saved: string;
  billingAddress: string;
  address: Record<'line1' | 'city' | 'state' | 'zip', string>;
  taxId: string;
  taxKind: string;
  taxNumber: string;
  save: string;
  locked: string;
}

const en: AccountLabels = {
  defaultChanged: 'Your default card is changed.',
  expires: (m, y) => `expires ${m}/${y}`,
  defaultCard: 'Default',
  makeDefault: 'Make default',
  noCards: 'No card on file.',
  addCard: 'Add a card',
  newCardNote: 'A new card is entered on the payment processor’s secure form and becomes your default card.',
  creditBalance: 'Credit balance',
  noCredit: 'No prepaid credit.',
  amountToBuy: 'Amount of credit to buy',
  buyCredit: 'Buy credit',
  buyNote: 'Charged now to your default card; the credit is added once the payment succeeds.',
  creditGrants: 'Credit grants',
  date: 'Date',
  description: 'Description',
  granted: 'Granted',
  remaining: 'Remaining',
  expiresColumn: 'Expires',
  never: 'never',
  entitlements: 'Entitlements',
  feature: 'Feature',
  thisPeriod: 'This period',
  usedOf: (used, limit, left) => `${used} used of ${limit} — ${left} left this period`,
  included: 'included',
  notIncluded: 'not included',
  noEntitlements: 'No entitlements.',
  saved: 'Your billing details are saved.',
  billingAddress: 'Billing address',
  address: { line1: 'Street and number', city: 'City', state: 'State or region', zip: 'Postal code' },
  taxId: 'Tax id',
  taxKind: 'Kind (eu_vat, gb_vat, us_ein…)',
  taxNumber: 'Number',
  save: 'Save',
  locked: 'Ask us to change these details.',
};

const de: AccountLabels = {
  defaultChanged: 'Ihre Standardkarte ist geändert.',
  expires: (m, y) => `gültig bis ${m}/${y}`,
  defaultCard: 'Standard',
  makeDefault: 'Als Standard festlegen',
  noCards: 'Keine Karte hinterlegt.',
  addCard: 'Karte hinzufügen',
  newCardNote:
    'Eine neue Karte wird im sicheren Formular des Zahlungsdienstleisters eingegeben und wird Ihre Standardkarte.',
  creditBalance: 'Guthaben',
  noCredit: 'Kein Guthaben.',
  amountToBuy: 'Zu kaufendes Guthaben',
  buyCredit: 'Guthaben kaufen',
  buyNote: 'Wird sofort Ihrer Standardkarte belastet; das Guthaben wird nach erfolgreicher Zahlung gutgeschrieben.',
  creditGrants: 'Gutschriften',
  date: 'Datum',
  description: 'Beschreibung',
  granted: 'Gewährt',
  remaining: 'Verbleibend',
  expiresColumn: 'Gültig bis',
  never: 'unbegrenzt',
  entitlements: 'Kontingente',
  feature: 'Funktion',
  thisPeriod: 'Dieser Zeitraum',
  usedOf: (used, limit, left) => `${used} von ${limit} genutzt — noch ${left} in diesem Zeitraum`,
  included: 'enthalten',
  notIncluded: 'nicht enthalten',
  noEntitlements: 'Keine Kontingente.',
  saved: 'Ihre Rechnungsdaten sind gespeichert.',
  billingAddress: 'Rechnungsadresse',
  address: { line1: 'Straße und Hausnummer', city: 'Ort', state: 'Bundesland oder Region', zip: 'Postleitzahl' },
  taxId: 'Steuernummer',
  taxKind: 'Art (eu_vat, gb_vat, us_ein…)',
  taxNumber: 'Nummer',
  save: 'Speichern',
  locked: 'Bitte wenden Sie sich an uns, um diese Daten zu ändern.',
};

const fr: AccountLabels = {
  defaultChanged: 'Votre carte par défaut est modifiée.',
  expires: (m, y) => `expire fin ${m}/${y}`,
  defaultCard: 'Par défaut',
  makeDefault: 'Définir par défaut',
  noCards: 'Aucune carte enregistrée.',
  addCard: 'Ajouter une carte',
  newCardNote:
    'Une nouvelle carte se saisit sur le formulaire sécurisé du prestataire de paiement et devient votre carte par défaut.',
  creditBalance: 'Solde de crédit',
  noCredit: 'Aucun crédit prépayé.',
  amountToBuy: 'Montant de crédit à acheter',
  buyCredit: 'Acheter du crédit',
  buyNote: 'Débité immédiatement sur votre carte par défaut ; le crédit est ajouté une fois le paiement réussi.',
  creditGrants: 'Crédits accordés',
  date: 'Date',
  description: 'Description',
  granted: 'Accordé',
  remaining: 'Restant',
  expiresColumn: 'Expiration',
  never: 'jamais',
  entitlements: 'Droits',
  feature: 'Fonctionnalité',
  thisPeriod: 'Cette période',
  usedOf: (used, limit, left) => `${used} utilisés sur ${limit} — il reste ${left} sur cette période`,
  included: 'inclus',
  notIncluded: 'non inclus',
  noEntitlements: 'Aucun droit.',
  saved: 'Vos informations de facturation sont enregistrées.',
  billingAddress: 'Adresse de facturation',
  address: { line1: 'Rue et numéro', city: 'Ville', state: 'Région ou département', zip: 'Code postal' },
  taxId: 'Numéro fiscal',
  taxKind: 'Type (eu_vat, gb_vat, us_ein…)',
  taxNumber: 'Numéro',
  save: 'Enregistrer',
  locked: 'Contactez-nous pour modifier ces informations.',
};

const es: AccountLabels = {
  defaultChanged: 'Su tarjeta predeterminada ha cambiado.',
  expires: (m, y) => `caduca ${m}/${y}`,
  defaultCard: 'Predeterminada',
  makeDefault: 'Hacer predeterminada',
  noCards: 'No hay ninguna tarjeta registrada.',
  addCard: 'Añadir una tarjeta',
  newCardNote:
    'Una tarjeta nueva se introduce en el formulario seguro del procesador de pagos y pasa a ser su tarjeta predeterminada.',
  creditBalance: 'Saldo de crédito',
  noCredit: 'No hay crédito prepago.',
  amountToBuy: 'Importe de crédito a comprar',
  buyCredit: 'Comprar crédito',
  buyNote: 'Se cobra ahora en su tarjeta predeterminada; el crédito se añade cuando el pago se completa.',
  creditGrants: 'Créditos concedidos',
  date: 'Fecha',
  description: 'Descripción',
  granted: 'Concedido',
  remaining: 'Restante',
  expiresColumn: 'Caduca',
  never: 'nunca',
  entitlements: 'Derechos',
  feature: 'Función',
  thisPeriod: 'Este periodo',
  usedOf: (used, limit, left) => `${used} usados de ${limit} — quedan ${left} en este periodo`,
  included: 'incluido',
  notIncluded: 'no incluido',
  noEntitlements: 'No hay derechos.',
  saved: 'Sus datos de facturación se han guardado.',
  billingAddress: 'Dirección de facturación',
  address: { line1: 'Calle y número', city: 'Ciudad', state: 'Provincia o región', zip: 'Código postal' },
  taxId: 'Identificación fiscal',
  taxKind: 'Tipo (eu_vat, gb_vat, us_ein…)',
  taxNumber: 'Número',
  save: 'Guardar',
  locked: 'Pídanos que cambiemos estos datos.',
};

const ja: AccountLabels = {
  defaultChanged: '既定のカードを変更しました。',
  expires: (m, y) => `有効期限 ${m}/${y}`,
  defaultCard: '既定',
  makeDefault: '既定にする',
  noCards: '登録済みのカードがありません。',
  addCard: 'カードを追加',
  newCardNote: '新しいカードは決済代行会社の安全なフォームで入力され、既定のカードになります。',
  creditBalance: 'クレジット残高',
  noCredit: '前払いクレジットはありません。',
  amountToBuy: '購入するクレジットの金額',
  buyCredit: 'クレジットを購入',
  buyNote: '既定のカードにすぐに請求され、お支払いの完了後にクレジットが追加されます。',
  creditGrants: 'クレジット付与履歴',
  date: '日付',
  description: '内容',
  granted: '付与額',
  remaining: '残額',
  expiresColumn: '有効期限',
  never: 'なし',
  entitlements: '利用枠',
  feature: '機能',
  thisPeriod: '今期',
  usedOf: (used, limit, left) => `${limit}中${used}を使用 — 今期の残り ${left}`,
  included: '含まれます',
  notIncluded: '含まれません',
  noEntitlements: '利用枠はありません。',
  saved: '請求先情報を保存しました。',
  billingAddress: '請求先住所',
  address: { line1: '番地', city: '市区町村', state: '都道府県・地域', zip: '郵便番号' },
  taxId: '税務番号',
  taxKind: '種類（eu_vat、gb_vat、us_ein…）',
  taxNumber: '番号',
  save: '保存',
  locked: 'これらの情報の変更はお問い合わせください。',
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const ACCOUNT_LABELS: Record<Locale, AccountLabels> = { en, de, fr, es, ja };
