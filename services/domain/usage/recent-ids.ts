import type { BatchRows } from './batch-rows.js';
import { HashIndex53 } from './hash-set.js';
import { recentIdHash } from './id-hash.js';

const HOUR_MS = 3_600_000;
/** Claims kept beyond the window (rows accepted a little before the filter's load still get an answer). */
export const RECENT_MARGIN_MS = HOUR_MS;
/** An account is reloaded at most this often per process (mayReload). */
const RELOAD_EVERY_MS = 30_000;

/**
 * One account's part: the 53-bit hashes of the identities it claimed, each with the last hour (of accept time) it
 * was claimed in — one table, so a row is answered by one probe, not one per hour of the window.
 */
interface AccountIds {
  ids: HashIndex53;
  /** No hash's hour is below this (prune: whether a pass over the table can drop anything). */
  oldestHour: number;
  /** Every claim accepted at or after this is in `ids`: the filter's memory starts here. */
  floor: number;
}

/**
 * The consumer's memory of the identities claimed within the window, per account (USAGE_IDENTITY=window): it
 * answers "certainly no claim within the window" for a new id without asking ClickHouse; anything else (a hash
 * it holds, a row accepted before its memory starts, an account it does not hold) is looked up in the stored
 * claims. It is complete for an account only while this process is the account's last claimer
 * (identity-owners-store.ts) — otherwise reloaded from the stored claims (claim-lock.ts) — and it holds only what
 * is stored, so a restart (or kill -9) loses nothing: the new process loads each account on first use.
 */
export class RecentIds {
  private readonly accounts = new Map<string, AccountIds>();
  /** When each account was last loaded: survives `drop`. */
  private readonly loadedAt = new Map<string, number>();
  /** Whether another process had claimed for each account before this process's last claim of it. */
  private readonly takenLast = new Map<string, boolean>();
  private prunedAt = 0;

  constructor(private readonly windowMs: number) {}

  /** Whether the account is held (loaded since this process became its claimer). */
  holds(account: string): boolean {
    return this.accounts.has(account);
  }

  /**
   * Whether a row of `account` accepted at `received`, whose identity hashes to `hash` (id-hash.ts), may have a
   * claim within the window of its accept time: the stored claims must say.
   */
  mayHave(account: string, hash: number, received: number): boolean {
    const a = this.accounts.get(account);
    if (!a || received - this.windowMs < a.floor) return true;
    return a.ids.get(hash) >= 0;
  }

  /** Forgets an account (its stored claims may hold another process's since). */
  drop(account: string): void {
    this.accounts.delete(account);
  }

  /**
   * Whether to reload an account now: at most every RELOAD_EVERY_MS — two processes sharing an account's messages
   * would otherwise each read its whole window of claims at every batch. Until then it is not held: its rows are
   * all looked up (exact, at `USAGE_IDENTITY=id`'s cost).
   */
  mayReload(account: string, now = Date.now()): boolean {
    return now - (this.loadedAt.get(account) ?? Number.NEGATIVE_INFINITY) >= RELOAD_EVERY_MS;
  }

  /**
   * Notes whether another process claimed for `account` since this one last did, and says whether it did so the
   * time before too: processes taking turns on one account's messages. Reloading its window then buys nothing —
   * the next turn of another process makes it stale again — so its rows are looked up instead until the turns stop.
   */
  contended(account: string, taken: boolean): boolean {
    const before = this.takenLast.get(account) === true;
    this.takenLast.set(account, taken);
    return taken && before;
  }

  /** Holds an account with its claims accepted since `floor` (the stored ones, just read). */
  load(account: string, floor: number, claims: Iterable<{ meter: string; id: string; claimed: number }>): void {
    const a: AccountIds = { ids: new HashIndex53(), oldestHour: Number.POSITIVE_INFINITY, floor };
    this.accounts.set(account, a);
    this.loadedAt.set(account, Date.now());
    for (const c of claims) this.put(a, recentIdHash(account, c.meter, c.id), c.claimed);
  }

  /** Remembers rows just claimed (their claims are stored) of held accounts: `claimed` numbers rows of `rows`. */
  add(rows: BatchRows, claimed: ArrayLike<number>, now = Date.now()): void {
    let run = -1;
    let a: AccountIds | undefined;
    for (let k = 0; k < claimed.length; k++) {
      const i = claimed[k]!;
      if (rows.run[i] !== run) a = this.accounts.get(rows.runAccount[(run = rows.run[i]!)]!);
      if (a) this.put(a, rows.hash[i]!, rows.received[i]!);
    }
    this.prune(now);
  }

  private put(a: AccountIds, hash: number, claimed: number): void {
    if (claimed < a.floor) return;
    const hour = Math.floor(claimed / HOUR_MS);
    a.ids.setMax(hash, hour);
    if (hour < a.oldestHour) a.oldestHour = hour;
  }

  /**
   * Lets go of the identities last claimed in hours no longer needed (the table is rebuilt from the rest, about
   * once an hour per account): memory bounded by what was claimed within the window (and margin).
   */
  private prune(now: number): void {
    if (now - this.prunedAt < 60_000) return;
    this.prunedAt = now;
    const keepFrom = Math.floor((now - this.windowMs - RECENT_MARGIN_MS) / HOUR_MS);
    for (const a of this.accounts.values()) {
      if (a.oldestHour >= keepFrom) continue;
      const kept = new HashIndex53(a.ids.size);
      let oldest = Number.POSITIVE_INFINITY;
      let dropped = Number.NEGATIVE_INFINITY;
      a.ids.forEach((hash, hour) => {
        if (hour < keepFrom) dropped = Math.max(dropped, hour);
        else {
          kept.set(hash, hour);
          oldest = Math.min(oldest, hour);
        }
      });
      a.ids = kept;
      a.oldestHour = oldest;
      // The claims of the identities dropped are no longer held: the memory starts after their hours.
      if (dropped > Number.NEGATIVE_INFINITY) a.floor = Math.max(a.floor, (dropped + 1) * HOUR_MS);
    }
  }
}
