import { isLocale, type Locale } from '../invoices/invoice-texts.js';

/**
 * The customer portal's fixed texts (services/control/portal/), one table per language: the navigation, its Back
 * link and the invoices page. A visit's language is its session's `locale` when that names one of the five, else
 * the customer's (`portalLocale`). `en` says what the portal always said. The other pages' texts are in
 * overview-texts.ts and account-texts.ts. `refusals`: the pages of a link or session that does not (or no longer)
 * work, and of an action the API refused — there the API's own (English) message follows the localized one.
 */
export interface PortalLabels {
  sections: Record<'overview' | 'invoices' | 'paymentMethods' | 'balances' | 'billingDetails', string>;
  /** The navigation's accessible name. */
  portal: string;
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
  refusals: Record<
    | 'ended'
    | 'formExpired'
    | 'linkUsed'
    | 'linkExpired'
    | 'linkUnknown'
    | 'notAllowed'
    | 'notFound'
    | 'conflict'
    | 'invalid',
    { title: string; message: string }
  >;
}

const en: PortalLabels = {
  sections: {
    overview: 'Overview',
    invoices: 'Invoices',
    paymentMethods: 'Payment methods',
    balances: 'Credit and entitlements',
    billingDetails: 'Billing details',
  },
  portal: 'Portal',
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
  refusals: {
    ended: {
      title: 'Your portal session has ended',
      message: 'Sign in again through the link on the site where you manage your account.',
    },
    formExpired: {
      title: 'This form has expired',
      message: 'The form was not sent from this portal session. Go back, reload the page and try again.',
    },
    linkUsed: {
      title: 'This link was already used',
      message: 'A portal link opens once. Ask for a new link where you found this one.',
    },
    linkExpired: {
      title: 'This link has expired',
      message: 'Portal links work for a short time only. Ask for a new link where you found this one.',
    },
    linkUnknown: {
      title: 'Page not found',
      message: 'This link does not lead to a portal. Check that it was copied whole.',
    },
    notAllowed: { title: 'Not allowed', message: 'This is not allowed here.' },
    notFound: { title: 'Page not found', message: 'There is nothing of yours here.' },
    conflict: { title: 'Not possible now', message: 'This cannot be done in the current state.' },
    invalid: { title: 'Please check your input', message: 'Some of what was entered is not valid.' },
  },
};

const de: PortalLabels = {
  sections: {
    overview: 'Übersicht',
    invoices: 'Rechnungen',
    paymentMethods: 'Zahlungsmethoden',
    balances: 'Guthaben und Kontingente',
    billingDetails: 'Rechnungsdaten',
  },
  portal: 'Portal',
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
  refusals: {
    ended: {
      title: 'Ihre Portalsitzung ist beendet',
      message: 'Melden Sie sich erneut über den Link auf der Website an, auf der Sie Ihr Konto verwalten.',
    },
    formExpired: {
      title: 'Dieses Formular ist abgelaufen',
      message:
        'Das Formular stammt nicht aus dieser Portalsitzung. Gehen Sie zurück, laden Sie die Seite neu und versuchen Sie es erneut.',
    },
    linkUsed: {
      title: 'Dieser Link wurde bereits verwendet',
      message:
        'Ein Portallink lässt sich nur einmal öffnen. Fordern Sie dort, wo Sie ihn gefunden haben, einen neuen an.',
    },
    linkExpired: {
      title: 'Dieser Link ist abgelaufen',
      message: 'Portallinks gelten nur kurze Zeit. Fordern Sie dort, wo Sie ihn gefunden haben, einen neuen an.',
    },
    linkUnknown: {
      title: 'Seite nicht gefunden',
      message: 'Dieser Link führt zu keinem Portal. Prüfen Sie, ob er vollständig kopiert wurde.',
    },
    notAllowed: { title: 'Nicht erlaubt', message: 'Dies ist hier nicht erlaubt.' },
    notFound: { title: 'Seite nicht gefunden', message: 'Hier gibt es nichts, das zu Ihrem Konto gehört.' },
    conflict: { title: 'Derzeit nicht möglich', message: 'Dies ist im aktuellen Zustand nicht möglich.' },
    invalid: { title: 'Bitte prüfen Sie Ihre Eingabe', message: 'Einige Angaben sind ungültig.' },
  },
};

const fr: PortalLabels = {
  sections: {
    overview: 'Vue d’ensemble',
    invoices: 'Factures',
    paymentMethods: 'Moyens de paiement',
    balances: 'Crédits et droits',
    billingDetails: 'Informations de facturation',
  },
  portal: 'Portail',
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
  refusals: {
    ended: {
      title: 'Votre session du portail est terminée',
      message: 'Reconnectez-vous avec le lien du site où vous gérez votre compte.',
    },
    formExpired: {
      title: 'Ce formulaire a expiré',
      message:
        'Le formulaire ne provient pas de cette session du portail. Revenez en arrière, rechargez la page et réessayez.',
    },
    linkUsed: {
      title: 'Ce lien a déjà été utilisé',
      message: 'Un lien du portail ne s’ouvre qu’une fois. Demandez un nouveau lien là où vous avez trouvé celui-ci.',
    },
    linkExpired: {
      title: 'Ce lien a expiré',
      message:
        'Les liens du portail ne fonctionnent que peu de temps. Demandez un nouveau lien là où vous avez trouvé celui-ci.',
    },
    linkUnknown: {
      title: 'Page introuvable',
      message: 'Ce lien ne mène à aucun portail. Vérifiez qu’il a été copié en entier.',
    },
    notAllowed: { title: 'Non autorisé', message: 'Cette action n’est pas autorisée ici.' },
    notFound: { title: 'Page introuvable', message: 'Rien ici ne vous appartient.' },
    conflict: { title: 'Impossible pour le moment', message: 'Cette action n’est pas possible dans l’état actuel.' },
    invalid: {
      title: 'Veuillez vérifier votre saisie',
      message: 'Certaines informations saisies ne sont pas valides.',
    },
  },
};

const es: PortalLabels = {
  sections: {
    overview: 'Resumen',
    invoices: 'Facturas',
    paymentMethods: 'Métodos de pago',
    balances: 'Crédito y derechos',
    billingDetails: 'Datos de facturación',
  },
  portal: 'Portal',
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
  refusals: {
    ended: {
      title: 'Su sesión del portal ha terminado',
      message: 'Vuelva a entrar con el enlace del sitio donde gestiona su cuenta.',
    },
    formExpired: {
      title: 'Este formulario ha caducado',
      message:
        'El formulario no se envió desde esta sesión del portal. Vuelva atrás, recargue la página e inténtelo de nuevo.',
    },
    linkUsed: {
      title: 'Este enlace ya se ha usado',
      message: 'Un enlace del portal se abre una sola vez. Pida un enlace nuevo donde encontró este.',
    },
    linkExpired: {
      title: 'Este enlace ha caducado',
      message: 'Los enlaces del portal solo funcionan poco tiempo. Pida un enlace nuevo donde encontró este.',
    },
    linkUnknown: {
      title: 'Página no encontrada',
      message: 'Este enlace no lleva a ningún portal. Compruebe que se copió completo.',
    },
    notAllowed: { title: 'No permitido', message: 'Esto no está permitido aquí.' },
    notFound: { title: 'Página no encontrada', message: 'Aquí no hay nada suyo.' },
    conflict: { title: 'No es posible ahora', message: 'Esto no se puede hacer en el estado actual.' },
    invalid: { title: 'Revise los datos introducidos', message: 'Algunos de los datos introducidos no son válidos.' },
  },
};

const ja: PortalLabels = {
  sections: {
    overview: '概要',
    invoices: '請求書',
    paymentMethods: 'お支払い方法',
    balances: 'クレジットと利用枠',
    billingDetails: '請求先情報',
  },
  portal: 'ポータル',
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
  refusals: {
    ended: {
      title: 'ポータルのセッションが終了しました',
      message: 'アカウントを管理しているサイトのリンクから、もう一度サインインしてください。',
    },
    formExpired: {
      title: 'このフォームは有効期限が切れています',
      message:
        'このフォームは現在のポータルセッションから送信されていません。前のページに戻り、再読み込みしてからもう一度お試しください。',
    },
    linkUsed: {
      title: 'このリンクは使用済みです',
      message: 'ポータルのリンクは一度しか開けません。このリンクを入手した場所で新しいリンクをご依頼ください。',
    },
    linkExpired: {
      title: 'このリンクは有効期限が切れています',
      message: 'ポータルのリンクは短時間のみ有効です。このリンクを入手した場所で新しいリンクをご依頼ください。',
    },
    linkUnknown: {
      title: 'ページが見つかりません',
      message: 'このリンクはポータルにつながっていません。リンクが途中で切れていないかご確認ください。',
    },
    notAllowed: { title: '許可されていません', message: 'この操作はここでは許可されていません。' },
    notFound: { title: 'ページが見つかりません', message: 'お客様のアカウントに該当するものはありません。' },
    conflict: { title: '現在は実行できません', message: '現在の状態ではこの操作は実行できません。' },
    invalid: { title: '入力内容をご確認ください', message: '入力内容の一部が正しくありません。' },
  },
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const PORTAL_LABELS: Record<Locale, PortalLabels> = { en, de, fr, es, ja };

/** A portal visit's language: its session's tag when it names one of the five (de, de-DE), else the customer's. */
export function portalLocale(sessionTag: string | null, customerLocale: string | null): Locale {
  const lang = sessionTag?.slice(0, 2).toLowerCase();
  if (isLocale(lang)) return lang;
  return isLocale(customerLocale) ? customerLocale : 'en';
}
