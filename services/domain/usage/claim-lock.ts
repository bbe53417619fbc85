import type { PgPool } from '../../../shared/clients/postgres.js';
import type { UsageShard } from '../../../shared/clients/usage-shards.js';
import { ASSIGNED, batchRows, claimingAccounts, idOf, rowsIfAllAssigned } from './batch-rows.js';
import { CLAIMS_TABLE, keepUnclaimed, type ClaimedBatch } from './claims.js';
import { claimedIdentities, insertClaims } from './claims-store.js';
import { ACCOUNT_LOCK, withAccountLocks } from './account-locks.js';
import { RECENT_MARGIN_MS, type RecentIds } from './recent-ids.js';
import {
  completeClaimsReplica,
  recentClaims,
  recordClaimsReplica,
  takeIdentityOwnership,
  type OwnershipBefore,
} from './identity-store.js';

/** How a writer claims: the window (ms; Infinity with USAGE_IDENTITY=id) and, for a window, its memory. */
export interface ClaimRule {
  windowMs: number;
  /** The process's recent ids and its name as their owner; without them every client id is looked up. */
  recent?: { ids: RecentIds; owner: string };
  /** The process's name as a claimer without a memory (USAGE_IDENTITY=id): where its claims are, on a cluster. */
  owner?: string;
}

/**
 * The rows of `chunks` that count: their identities are looked up and the new ones claimed
 * (services/domain/usage/claims.ts) under the accounts' claim locks — no other insert can claim them in between. The rows
 * are inserted by the caller after the locks: a row claimed under its own timestamp may be inserted by anyone, any
 * number of times.
 * On a cluster the lookup must see every claim stored on any replica of the shard: it runs on the replica the
 * accounts' last claimer left complete (identity-store.ts completeClaimsReplica) when that one answers, else on a
 * replica that first fetched every claim its twins hold (SYSTEM SYNC REPLICA) — so processes taking turns on one
 * account's messages meet on one replica instead of each waiting on replication under the lock.
 * With a memory of recent ids (recent-ids.ts) only the rows it cannot answer for are looked up: the others have
 * certainly no claim within the window. The process first becomes the accounts' owner; accounts it was not the
 * owner of (another process may have claimed their ids since) are reloaded from the stored claims — unless
 * processes are taking turns on them (RecentIds.contended): then they are looked up.
 */
export async function claimNewRows(
  pg: PgPool,
  shard: UsageShard,
  database: string,
  chunks: Uint8Array[],
  rule: ClaimRule = { windowMs: Number.POSITIVE_INFINITY },
  keys?: readonly number[],
): Promise<ClaimedBatch> {
  // Only server-assigned ids (the usual live batch): nothing to claim, no lock, no lookup.
  const live = rowsIfAllAssigned(chunks);
  if (live !== undefined)
    return { chunks, kept: live, dropped: 0, claims: Buffer.alloc(0), claimed: new Uint32Array(0) };
  const rows = batchRows(chunks);
  const accounts = claimingAccounts(rows);
  const recent = rule.recent;
  const owner = recent?.owner ?? rule.owner;
  return withAccountLocks(pg, ACCOUNT_LOCK.CLAIM, accounts, 'exclusive', async () => {
    const tracked = owner !== undefined && (recent !== undefined || shard.local !== '');
    const before = tracked
      ? await takeIdentityOwnership(pg, [...accounts], owner!)
      : new Map<string, OwnershipBefore>();
    const complete = shard.local && tracked ? completeClaimsReplica(accounts, before) : null;
    // Accounts another process claimed for since this one did (its memory of them is stale), and of those the ones
    // processes are taking turns on.
    const taken = new Set([...accounts].filter((a) => before.get(a)?.owner !== owner));
    const contended = new Set(recent ? [...accounts].filter((a) => recent.ids.contended(a, taken.has(a))) : []);
    const { batch, replica } = await shard.replicas.runPreferring(complete, async (ch, replica) => {
      if (shard.local && (complete === null || replica !== complete))
        await ch.command({
          query: `SYSTEM SYNC REPLICA ${database}.${CLAIMS_TABLE}${shard.local}`,
          clickhouse_settings: { receive_timeout: 20 },
        });
      if (recent) {
        const stale: string[] = [];
        const reload: string[] = [];
        for (const a of accounts) {
          if (!taken.has(a) && recent.ids.holds(a)) continue;
          stale.push(a);
          if (!contended.has(a) && recent.ids.mayReload(a)) reload.push(a);
        }
        for (const a of stale) recent.ids.drop(a);
        if (reload.length) {
          const floor = Date.now() - rule.windowMs - RECENT_MARGIN_MS;
          const byAccount = new Map(reload.map((a) => [a, [] as { meter: string; id: string; claimed: number }[]]));
          for (const c of await recentClaims(ch, database, reload, floor, shard.local))
            byAccount.get(c.account)?.push(c);
          for (const [a, claims] of byAccount) recent.ids.load(a, floor, claims);
        }
      }
      const lookup: number[] = [];
      const { flags, hash, received, run, runAccount } = rows;
      for (let i = 0; i < rows.count; i++)
        if (!(flags[i]! & ASSIGNED) && (!recent || recent.ids.mayHave(runAccount[run[i]!]!, hash[i]!, received[i]!)))
          lookup.push(i);
      const identities = lookup.map((i) => ({
        account: runAccount[run[i]!]!,
        meter: rows.runMeter[run[i]!]!,
        id: idOf(rows, i),
      }));
      const claimed = lookup.length ? await claimedIdentities(ch, database, identities, shard.local) : new Map();
      const b = keepUnclaimed(rows, lookup, claimed, rule.windowMs, keys);
      await insertClaims(ch, database, b.claims, shard.local);
      recent?.ids.add(rows, b.claimed);
      return { batch: b, replica };
    });
    // This replica now holds every claim of the accounts: the next claimer there needs no sync.
    if (shard.local && tracked && replica !== null) await recordClaimsReplica(pg, [...accounts], owner!, replica);
    return batch;
  });
}
