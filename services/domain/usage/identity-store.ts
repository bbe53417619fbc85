import type { ClickHouseClient } from '@clickhouse/client';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { chString } from './sql.js';
import { CLAIMS_TABLE } from './claims.js';

/**
 * Makes `owner` (a consumer process) the last claimer of `accounts` (infra/migrations/postgres/840): returns the
 * accounts it was not the owner of until now — its memory of their recent ids may miss another process's claims.
 * One autocommit statement, run while the caller holds the accounts' claim locks and before it writes any claim:
 * committed even if the caller fails later, so no claim can be stored under an owner that doesn't know it.
 */
export async function takeIdentityOwnership(
  pg: PgPool,
  accounts: readonly string[],
  owner: string,
): Promise<Set<string>> {
  const { rows } = await pg.query<{ account_id: string }>(
    `INSERT INTO usage_identity_owners (account_id, owner) SELECT a, $2 FROM unnest($1::text[]) AS a
     ON CONFLICT (account_id) DO UPDATE SET owner = EXCLUDED.owner, since = now()
       WHERE usage_identity_owners.owner <> EXCLUDED.owner
     RETURNING account_id`,
    [accounts, owner],
  );
  return new Set(rows.map((r) => r.account_id));
}

/** The identities of `accounts` claimed (accepted) since `sinceMs`, to hold in memory (recent-ids.ts). */
export async function recentClaims(
  ch: ClickHouseClient,
  database: string,
  accounts: readonly string[],
  sinceMs: number,
  local = '',
): Promise<{ account: string; meter: string; id: string; claimed: number }[]> {
  const rs = await ch.query({
    query: `SELECT account_id AS a, meter_id AS m, record_id AS r, claimed_ms AS c FROM ${database}.${CLAIMS_TABLE}${local}
      WHERE account_id IN (${accounts.map(chString).join(', ')}) AND claimed_ms >= ${Math.trunc(sinceMs)}`,
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ a: string; m: string; r: string; c: string | number }>();
  return rows.map((x) => ({ account: x.a, meter: x.m, id: x.r, claimed: Number(x.c) }));
}
