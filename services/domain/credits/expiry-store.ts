import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { appendEvents } from '../events/outbox-store.js';

/** Grants expired per transaction. */
const EXPIRY_BATCH = 500;

/**
 * THE expiry of credit (docs/credits.md "Expiry"), a step of the billing run: each grant with a remainder past its
 * expires_at leaves the balance — remaining 0, a `credit_expirations` ledger row with the remainder and
 * `credit.expired`, in one transaction. Grants are locked (SKIP LOCKED: a close spending them, or another run, keeps
 * them until it commits), and the row's primary key makes it once per grant: a crash before the commit leaves the
 * grant as it was for the next run, after it there is nothing left to expire. `inScope` restricts it to the run's
 * customers (a test clock's, or those on no clock); `scopeParam` is its parameter.
 */
export async function expireCredits(
  pg: PgPool,
  now: Date,
  scope: { condition: (accountColumn: string, param: string) => string; clockId: string | null },
): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await withTransaction(pg, async (client) => {
      const due = await client.query<{
        id: string;
        account_id: string;
        currency: string;
        remaining: string;
        expires_at: Date;
      }>(
        `SELECT id, account_id, currency, remaining::text AS remaining, expires_at FROM credit_grants g
          WHERE remaining > 0 AND expires_at IS NOT NULL AND expires_at <= $1 AND ${scope.condition('g.account_id', '$3')}
          ORDER BY expires_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [now, EXPIRY_BATCH, scope.clockId],
      );
      if (due.rows.length === 0) return 0;
      const ids = due.rows.map((g) => g.id);
      const expired = await client.query<{ grant_id: string }>(
        `INSERT INTO credit_expirations (grant_id, amount, expired_at)
         SELECT id, remaining, expires_at FROM credit_grants WHERE id = ANY($1)
         ON CONFLICT (grant_id) DO NOTHING RETURNING grant_id`,
        [ids],
      );
      await client.query('UPDATE credit_grants SET remaining = 0 WHERE id = ANY($1)', [ids]);
      const once = new Set(expired.rows.map((r) => r.grant_id));
      await appendEvents(
        client,
        due.rows
          .filter((g) => once.has(g.id))
          .map((g) => ({
            accountId: g.account_id,
            type: 'credit.expired' as const,
            data: {
              grant_id: g.id,
              amount: new JsonDecimal(g.remaining),
              currency: g.currency,
              expired_at: g.expires_at.toISOString(),
            },
          })),
      );
      return due.rows.length;
    });
    total += n;
    if (n < EXPIRY_BATCH) return total;
  }
}
