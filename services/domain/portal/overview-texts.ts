import type { Locale } from '../invoices/invoice-texts.js';

/**
 * The portal overview's fixed texts (services/control/portal/overview.ts, plan-choices.ts), one table per language
 * of the visit (portal-texts.ts `portalLocale`): a subscription's period, notes, actions, usage and upcoming invoice,
 * and what a finished action says. Amounts, quantities and dates are formatted by invoiceTexts (Intl). `en` says what
 * the page always said. A slot filled with HTML (a plan's name in a span) is passed in by the page, escaped there.
 */
export interface OverviewLabels {
  title: string;
  noSubscription: string;
  yourSubscription: string;
  done: Record<'cancel' | 'keep' | 'pause' | 'resume' | 'upgraded' | 'scheduled' | 'promotion', string>;
  currentPeriod: (range: string) => string;
  endsOn: (day: string) => string;
  pausedSince: (day: string) => string;
  changesTo: (plan: string, day: string) => string;
  discount: (name: string) => string;
  keep: string;
  cancel: string;
  resume: string;
  pause: string;
  promotionCode: string;
  apply: string;
  usageTitle: string;
  noMetered: string;
  usageCaption: (name: string, total: string) => string;
  dailyUsage: (name: string) => string;
  meter: (n: string) => string;
  upcomingTitle: string;
  totalSoFar: (amount: string) => string;
  changePlan: string;
  planChangeNote: string;
}

const en: OverviewLabels = {
  title: 'Your subscription',
  noSubscription: 'You have no active subscription.',
  yourSubscription: 'Your subscription',
  done: {
    cancel: 'Your subscription will end at the end of the current period.',
    keep: 'Your subscription continues: the cancellation is undone.',
    pause: 'Invoicing is paused.',
    resume: 'Invoicing is resumed.',
    upgraded: 'Your plan is changed now; the rest of this period is pro-rated on your next invoice.',
    scheduled: 'Your plan changes at the end of the current period.',
    promotion: 'The promotion code is applied from this period on.',
  },
  currentPeriod: (range) => `Current period: ${range}`,
  endsOn: (d) => `Ends on ${d}.`,
  pausedSince: (d) => `Invoicing paused since ${d}.`,
  changesTo: (plan, d) => `Changes to ${plan} on ${d}.`,
  discount: (name) => `Discount: ${name}`,
  keep: 'Keep my subscription',
  cancel: 'Cancel at the end of the period',
  resume: 'Resume invoicing',
  pause: 'Pause invoicing',
  promotionCode: 'Promotion code',
  apply: 'Apply',
  usageTitle: 'This period’s usage',
  noMetered: 'No metered items.',
  usageCaption: (name, total) => `${name}: ${total} this period`,
  dailyUsage: (name) => `Daily usage of ${name}`,
  meter: (n) => `meter ${n}`,
  upcomingTitle: 'Upcoming invoice',
  totalSoFar: (amount) => `Total so far: ${amount}`,
  changePlan: 'Change plan',
  planChangeNote: 'An upgrade starts now (this period is pro-rated); a downgrade starts when this period ends.',
};

const de: OverviewLabels = {
  title: 'Ihr Abonnement',
  noSubscription: 'Sie haben kein aktives Abonnement.',
  yourSubscription: 'Ihr Abonnement',
  done: {
    cancel: 'Ihr Abonnement endet zum Ende des laufenden Zeitraums.',
    keep: 'Ihr Abonnement läuft weiter: Die Kündigung ist aufgehoben.',
    pause: 'Die Rechnungsstellung ist pausiert.',
    resume: 'Die Rechnungsstellung läuft wieder.',
    upgraded:
      'Ihr Tarif ist jetzt geändert; der Rest dieses Zeitraums wird anteilig auf Ihrer nächsten Rechnung berechnet.',
    scheduled: 'Ihr Tarif ändert sich zum Ende des laufenden Zeitraums.',
    promotion: 'Der Aktionscode gilt ab diesem Zeitraum.',
  },
  currentPeriod: (range) => `Laufender Zeitraum: ${range}`,
  endsOn: (d) => `Endet am ${d}.`,
  pausedSince: (d) => `Rechnungsstellung pausiert seit ${d}.`,
  changesTo: (plan, d) => `Wechselt am ${d} zu ${plan}.`,
  discount: (name) => `Rabatt: ${name}`,
  keep: 'Abonnement behalten',
  cancel: 'Zum Ende des Zeitraums kündigen',
  resume: 'Rechnungsstellung fortsetzen',
  pause: 'Rechnungsstellung pausieren',
  promotionCode: 'Aktionscode',
  apply: 'Einlösen',
  usageTitle: 'Nutzung in diesem Zeitraum',
  noMetered: 'Keine nutzungsabhängigen Positionen.',
  usageCaption: (name, total) => `${name}: ${total} in diesem Zeitraum`,
  dailyUsage: (name) => `Tägliche Nutzung von ${name}`,
  meter: (n) => `Zähler ${n}`,
  upcomingTitle: 'Nächste Rechnung',
  totalSoFar: (amount) => `Bisher insgesamt: ${amount}`,
  changePlan: 'Tarif wechseln',
  planChangeNote:
    'Ein Upgrade gilt sofort (dieser Zeitraum wird anteilig berechnet); ein Downgrade gilt ab dem Ende dieses Zeitraums.',
};

const fr: OverviewLabels = {
  title: 'Votre abonnement',
  noSubscription: 'Vous n’avez aucun abonnement actif.',
  yourSubscription: 'Votre abonnement',
  done: {
    cancel: 'Votre abonnement prendra fin à la fin de la période en cours.',
    keep: 'Votre abonnement continue : la résiliation est annulée.',
    pause: 'La facturation est suspendue.',
    resume: 'La facturation a repris.',
    upgraded:
      'Votre formule est changée dès maintenant ; le reste de cette période est calculé au prorata sur votre prochaine facture.',
    scheduled: 'Votre formule change à la fin de la période en cours.',
    promotion: 'Le code promotionnel s’applique à partir de cette période.',
  },
  currentPeriod: (range) => `Période en cours : ${range}`,
  endsOn: (d) => `Prend fin le ${d}.`,
  pausedSince: (d) => `Facturation suspendue depuis le ${d}.`,
  changesTo: (plan, d) => `Passe à ${plan} le ${d}.`,
  discount: (name) => `Remise : ${name}`,
  keep: 'Conserver mon abonnement',
  cancel: 'Résilier à la fin de la période',
  resume: 'Reprendre la facturation',
  pause: 'Suspendre la facturation',
  promotionCode: 'Code promotionnel',
  apply: 'Appliquer',
  usageTitle: 'Consommation de la période',
  noMetered: 'Aucun élément facturé à l’usage.',
  usageCaption: (name, total) => `${name} : ${total} sur cette période`,
  dailyUsage: (name) => `Consommation quotidienne de ${name}`,
  meter: (n) => `compteur ${n}`,
  upcomingTitle: 'Prochaine facture',
  totalSoFar: (amount) => `Total à ce jour : ${amount}`,
  changePlan: 'Changer de formule',
  planChangeNote:
    'Une montée en gamme s’applique immédiatement (cette période est calculée au prorata) ; une descente en gamme à la fin de cette période.',
};

const es: OverviewLabels = {
  title: 'Su suscripción',
  noSubscription: 'No tiene ninguna suscripción activa.',
  yourSubscription: 'Su suscripción',
  done: {
    cancel: 'Su suscripción terminará al final del periodo actual.',
    keep: 'Su suscripción continúa: la cancelación se ha anulado.',
    pause: 'La facturación está en pausa.',
    resume: 'La facturación se ha reanudado.',
    upgraded: 'Su plan ha cambiado ya; el resto de este periodo se prorratea en su próxima factura.',
    scheduled: 'Su plan cambia al final del periodo actual.',
    promotion: 'El código promocional se aplica a partir de este periodo.',
  },
  currentPeriod: (range) => `Periodo actual: ${range}`,
  endsOn: (d) => `Termina el ${d}.`,
  pausedSince: (d) => `Facturación en pausa desde el ${d}.`,
  changesTo: (plan, d) => `Cambia a ${plan} el ${d}.`,
  discount: (name) => `Descuento: ${name}`,
  keep: 'Mantener mi suscripción',
  cancel: 'Cancelar al final del periodo',
  resume: 'Reanudar la facturación',
  pause: 'Pausar la facturación',
  promotionCode: 'Código promocional',
  apply: 'Aplicar',
  usageTitle: 'Consumo de este periodo',
  noMetered: 'No hay conceptos por consumo.',
  usageCaption: (name, total) => `${name}: ${total} en este periodo`,
  dailyUsage: (name) => `Consumo diario de ${name}`,
  meter: (n) => `medidor ${n}`,
  upcomingTitle: 'Próxima factura',
  totalSoFar: (amount) => `Total hasta ahora: ${amount}`,
  changePlan: 'Cambiar de plan',
  planChangeNote:
    'Una mejora empieza ya (este periodo se prorratea); un cambio a un plan inferior empieza al final de este periodo.',
};

const ja: OverviewLabels = {
  title: 'ご契約中のプラン',
  noSubscription: '有効なサブスクリプションはありません。',
  yourSubscription: 'ご契約中のプラン',
  done: {
    cancel: 'サブスクリプションは現在の期間の終了時に終了します。',
    keep: 'サブスクリプションは継続されます。解約は取り消されました。',
    pause: '請求を一時停止しました。',
    resume: '請求を再開しました。',
    upgraded: 'プランを変更しました。今期の残りは次回の請求書で日割り計算されます。',
    scheduled: 'プランは現在の期間の終了時に変更されます。',
    promotion: 'プロモーションコードは今期から適用されます。',
  },
  currentPeriod: (range) => `現在の期間：${range}`,
  endsOn: (d) => `${d}に終了します。`,
  pausedSince: (d) => `${d}から請求を一時停止中です。`,
  changesTo: (plan, d) => `${d}に${plan}へ変更されます。`,
  discount: (name) => `割引：${name}`,
  keep: 'サブスクリプションを継続する',
  cancel: '期間の終了時に解約する',
  resume: '請求を再開する',
  pause: '請求を一時停止する',
  promotionCode: 'プロモーションコード',
  apply: '適用',
  usageTitle: '今期のご利用量',
  noMetered: '従量課金の項目はありません。',
  usageCaption: (name, total) => `${name}：今期 ${total}`,
  dailyUsage: (name) => `${name}の日別ご利用量`,
  meter: (n) => `メーター ${n}`,
  upcomingTitle: '次回の請求書',
  totalSoFar: (amount) => `現時点の合計：${amount}`,
  changePlan: 'プランを変更',
  planChangeNote: 'アップグレードはすぐに適用され（今期は日割り計算）、ダウングレードは今期の終了時に適用されます。',
};

/** Every language's table (a unit test checks each has every key of `en`). */
export const OVERVIEW_LABELS: Record<Locale, OverviewLabels> = { en, de, fr, es, ja };
