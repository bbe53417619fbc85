import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import type { NewEvent } from '../events/outbox-store.js';

/**
 * A customer's wallet settings (migration 832, docs/credits.md "Auto-recharge and low-balance alert") and the
 * rules the billing run applies to them after its spends: whether an automatic top-up may be bought now, and the
 * low-balance alert, once per dip.
 */

type Queryable = Pick<PgPool, 'query'> | PgClient;

export interface WalletSettings {
  account_id: string;
  currency: string;
  auto_recharge_enabled: boolean;
  recharge_threshold: string | null;
  recharge_amount: string | null;
  max_recharges_per_month: number | null;
  low_balance_threshold: string | null;
  last_failure_code: string | null;
  last_failure_at: Date | null;
  updated_at: Date;
}

export interface WalletChange {
  currency: string;
  autoRecharge: { enabled: boolean; threshold: string; amount: string; maxPerMonth: number } | null;
  lowBalanceThreshold: string | null;
}

const COLUMNS = `account_id, currency, auto_recharge_enabled, recharge_threshold::text AS recharge_threshold,
  recharge_amount::text AS recharge_amount, max_recharges_per_month, low_balance_threshold::text AS low_balance_threshold,
  last_failure_code, last_failure_at, updated_at`;

/** The spendable balance of an account in a currency at `now` (unexpired grants' remainders), as SQL over $1, $2, $3. */
const BALANCE_SQL = `(SELECT coalesce(sum(remaining), 0) FROM credit_grants
  WHERE account_id = $1 AND currency = $2 AND remaining > 0 AND (expires_at IS NULL OR expires_at > $3))`;

export async function readWalletSettings(q: Queryable, accountId: string): Promise<WalletSettings | null> {
  const r = await q.query<WalletSettings>(`SELECT ${COLUMNS} FROM credit_wallet_settings WHERE account_id = $1`, [
    accountId,
  ]);
  return r.rows[0] ?? null;
}

/** Saves the settings whole; saving clears a past failure (auto-recharge tries again) and the low-balance dip. */
export async function saveWalletSettings(q: Queryable, accountId: string, c: WalletChange): Promise<WalletSettings> {
  const r = await q.query<WalletSettings>(
    `INSERT INTO credit_wallet_settings (account_id, currency, auto_recharge_enabled, recharge_threshold, recharge_amount,
                                         max_recharges_per_month, low_balance_threshold, updated_at)
     VALUES ($1, $2, $3, $4::numeric, $5::numeric, $6, $7::numeric, now())
     ON CONFLICT (account_id) DO UPDATE SET currency = EXCLUDED.currency, auto_recharge_enabled = EXCLUDED.auto_recharge_enabled,
       recharge_threshold = EXCLUDED.recharge_threshold, recharge_amount = EXCLUDED.recharge_amount,
       max_recharges_per_month = EXCLUDED.max_recharges_per_month, low_balance_threshold = EXCLUDED.low_balance_threshold,
       low_balance_notified = false, last_failure_code = NULL, last_failure_at = NULL, updated_at = now()
     RETURNING ${COLUMNS}`,
    [
      accountId,
      c.currency,
      c.autoRecharge?.enabled ?? false,
      c.autoRecharge?.threshold ?? null,
      c.autoRecharge?.amount ?? null,
      c.autoRecharge?.maxPerMonth ?? null,
      c.lowBalanceThreshold,
    ],
  );
  return r.rows[0]!;
}

/** What the settings' status shows: automatic top-ups this calendar month (UTC) and whether one is in flight. */
export async function autoRechargeStatus(
  q: Queryable,
  accountId: string,
  now: Date,
): Promise<{ thisMonth: number; inFlight: boolean; balance: string }> {
  const r = await q.query<{ this_month: number; in_flight: boolean; balance: string }>(
    `SELECT (SELECT count(*) FROM credit_top_ups WHERE account_id = $1 AND trigger = 'auto_recharge'
               AND created_at >= date_trunc('month', $3::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')::int AS this_month,
            EXISTS (SELECT 1 FROM credit_top_ups WHERE account_id = $1 AND trigger = 'auto_recharge' AND status = 'pending') AS in_flight,
            ${BALANCE_SQL}::text AS balance
       FROM credit_wallet_settings WHERE account_id = $1 AND currency = $2`,
    [accountId, (await readWalletSettings(q, accountId))?.currency ?? '', now],
  );
  return {
    thisMonth: r.rows[0]?.this_month ?? 0,
    inFlight: r.rows[0]?.in_flight ?? false,
    balance: r.rows[0]?.balance ?? '0',
  };
}

/**
 * THE auto-recharge rule, under the settings' row lock (in the transaction that writes the top-up, so concurrent
 * runs and spends buy once): enabled, no failure waiting, the balance below the threshold, none in flight, fewer
 * than max_per_month this calendar month (UTC). The amount and currency to buy, or null.
 */
export async function claimAutoRecharge(
  client: PgClient,
  accountId: string,
  now: Date,
): Promise<{ amount: string; currency: string } | null> {
  const s = await client.query<WalletSettings>(
    `SELECT ${COLUMNS} FROM credit_wallet_settings WHERE account_id = $1 FOR UPDATE`,
    [accountId],
  );
  const w = s.rows[0];
  if (!w || !w.auto_recharge_enabled || w.last_failure_at) return null;
  const r = await client.query<{ due: boolean }>(
    `SELECT ${BALANCE_SQL} < $4::numeric
            AND NOT EXISTS (SELECT 1 FROM credit_top_ups WHERE account_id = $1 AND trigger = 'auto_recharge' AND status = 'pending')
            AND (SELECT count(*) FROM credit_top_ups WHERE account_id = $1 AND trigger = 'auto_recharge'
                   AND created_at >= date_trunc('month', $3::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') < $5 AS due`,
    [accountId, w.currency, now, w.recharge_threshold, w.max_recharges_per_month],
  );
  return r.rows[0]!.due ? { amount: w.recharge_amount!, currency: w.currency } : null;
}

/** The accounts of the run's scope whose auto-recharge may be due (claimAutoRecharge decides, under the lock). */
export async function walletsBelowThreshold(
  pg: PgPool,
  now: Date,
  scope: { condition: (accountColumn: string, param: string) => string; clockId: string | null },
): Promise<string[]> {
  const r = await pg.query<{ account_id: string }>(
    `SELECT w.account_id FROM credit_wallet_settings w
      WHERE w.auto_recharge_enabled AND w.last_failure_at IS NULL AND ${scope.condition('w.account_id', '$2')}
        AND (SELECT coalesce(sum(remaining), 0) FROM credit_grants g WHERE g.account_id = w.account_id AND g.currency = w.currency
              AND g.remaining > 0 AND (g.expires_at IS NULL OR g.expires_at > $1)) < w.recharge_threshold`,
    [now, scope.clockId],
  );
  return r.rows.map((x) => x.account_id);
}

/**
 * The low-balance alert (docs/credits.md): `credit.balance_low` once when the balance is below the threshold, the
 * dip remembered (low_balance_notified) until the balance is back at or above it. Guarded updates: once per dip
 * whichever runs at the same time.
 */
export async function lowBalanceAlerts(
  client: PgClient,
  now: Date,
  scope: { condition: (accountColumn: string, param: string) => string; clockId: string | null },
): Promise<NewEvent[]> {
  const balance = `(SELECT coalesce(sum(remaining), 0) FROM credit_grants g WHERE g.account_id = w.account_id AND g.currency = w.currency
      AND g.remaining > 0 AND (g.expires_at IS NULL OR g.expires_at > $1))`;
  await client.query(
    `UPDATE credit_wallet_settings w SET low_balance_notified = false
      WHERE low_balance_notified AND ${scope.condition('w.account_id', '$2')}
        AND (low_balance_threshold IS NULL OR ${balance} >= low_balance_threshold)`,
    [now, scope.clockId],
  );
  const r = await client.query<{ account_id: string; currency: string; balance: string; threshold: string }>(
    `UPDATE credit_wallet_settings w SET low_balance_notified = true
      WHERE NOT low_balance_notified AND low_balance_threshold IS NOT NULL AND ${scope.condition('w.account_id', '$2')}
        AND ${balance} < low_balance_threshold
      RETURNING account_id, currency, ${balance}::text AS balance, low_balance_threshold::text AS threshold`,
    [now, scope.clockId],
  );
  return r.rows.map((x) => ({
    accountId: x.account_id,
    type: 'credit.balance_low' as const,
    data: { currency: x.currency, balance: new JsonDecimal(x.balance), threshold: new JsonDecimal(x.threshold) },
  }));
}

/** An automatic top-up failed: shown on the settings, and auto-recharge waits until they are saved again. */
export async function recordAutoRechargeFailures(
  client: PgClient,
  failed: { accountId: string; code: string }[],
  now: Date,
): Promise<void> {
  if (failed.length === 0) return;
  await client.query(
    `UPDATE credit_wallet_settings w SET last_failure_code = u.code, last_failure_at = $3
       FROM unnest($1::text[], $2::text[]) AS u(account_id, code) WHERE w.account_id = u.account_id`,
    [failed.map((f) => f.accountId), failed.map((f) => f.code), now],
  );
}
