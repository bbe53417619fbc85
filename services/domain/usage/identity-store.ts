import type { ClickHouseClient } from '@clickhouse/client';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { chString } from './sql.js';
import { CLAIMS_TABLE } from './claims.js';

/** An account's ownership row as it was before a claimer took the claim lock (infra/migrations/postgres/840, 885). */
export interface OwnershipBefore {
  owner: string;
  /** "<owner> <replica>": the replica holding every claim of the account when that owner wrote it. */
  claimsAt: string | null;
}

/**
 * Makes `owner` (a consumer process) the last claimer of `accounts` and returns their rows as they were — an
 * account without one was never claimed by a process that writes them. Its memory of recent ids may miss another
 * process's claims of an account whose owner was not `owner`. One autocommit statement, run while the caller holds
 * the accounts' claim locks and before it writes any claim: committed even if the caller fails later, so no claim
 * can be stored under an owner that doesn't know it.
 */
export async function takeIdentityOwnership(
  pg: PgPool,
  accounts: readonly string[],
  owner: string,
): Promise<Map<string, OwnershipBefore>> {
  const { rows } = await pg.query<{ account_id: string; owner: string; claims_at: string | null }>(
    `WITH before AS (
       SELECT account_id, owner, claims_at FROM usage_identity_owners WHERE account_id = ANY($1::text[])
     ), taken AS (
       INSERT INTO usage_identity_owners (account_id, owner) SELECT a, $2 FROM unnest($1::text[]) AS a
       ON CONFLICT (account_id) DO UPDATE SET owner = EXCLUDED.owner, since = now()
         WHERE usage_identity_owners.owner <> EXCLUDED.owner
     )
     SELECT account_id, owner, claims_at FROM before`,
    [accounts, owner],
  );
  return new Map(rows.map((r) => [r.account_id, { owner: r.owner, claimsAt: r.claims_at }]));
}

/**
 * Records that `owner` stored its claims of `accounts` on `replica`, where every claim of theirs now is — a row that
 * already says so is left alone (one owner on one replica, batch after batch, writes nothing).
 */
export async function recordClaimsReplica(
  pg: PgPool,
  accounts: readonly string[],
  owner: string,
  replica: string,
): Promise<void> {
  await pg.query(
    `UPDATE usage_identity_owners SET claims_at = $3
      WHERE account_id = ANY($1::text[]) AND owner = $2 AND claims_at IS DISTINCT FROM $3`,
    [accounts, owner, `${owner} ${replica}`],
  );
}

/**
 * The replica that holds every claim of `accounts` by the rows before this claimer took them: named by the owner
 * that wrote the row (a value an older consumer left behind, after another took the account over, names no one) —
 * null when an account has no such row or two accounts name different replicas: the claimer syncs its replica first.
 */
export function completeClaimsReplica(
  accounts: Iterable<string>,
  before: ReadonlyMap<string, OwnershipBefore>,
): string | null {
  let replica: string | null = null;
  for (const a of accounts) {
    const b = before.get(a);
    if (!b?.claimsAt?.startsWith(`${b.owner} `)) return null;
    const r = b.claimsAt.slice(b.owner.length + 1);
    if (replica !== null && r !== replica) return null;
    replica = r;
  }
  return replica;
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
