/**
 * Billing periods are calendar months in UTC. The first is the month of creation, from its first day
 * (a subscription created on the 20th still has a period starting on the 1st); a canceled subscription's
 * last period is the month it was canceled in. The billing engine uses the same functions.
 */
export function monthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

export function nextMonthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

export interface Period {
  start: Date;
  end: Date;
}

/** The period containing `at`, never before the creation month. */
export function periodAt(createdAt: Date, at: Date): Period {
  const start = monthStart(at.getTime() < createdAt.getTime() ? createdAt : at);
  return { start, end: nextMonthStart(start) };
}

/** Active: the period containing now. Canceled: the period it was canceled in (its last). */
export function currentPeriod(
  sub: { status: string; created_at: Date; canceled_at: Date | null },
  now = new Date(),
): Period {
  return periodAt(sub.created_at, sub.status === 'canceled' && sub.canceled_at ? sub.canceled_at : now);
}
