/**
 * How the customer registry travels (docs/design.md §6, docs/operator-mode.md): a NATS KV bucket of at most
 * 65,536 entries, one per shard of the account ids, each holding every customer of its shard. A million
 * customers are 65,536 messages of ~1 KiB to load — not a million keys — and a create rewrites one small entry.
 * Postgres computes the same shard (`customer_registry_shard(id)`, migration 600) so a writer reads its shard's
 * rows with an index.
 */
import { createHash } from 'node:crypto';

export const CUSTOMER_SHARDS = 65_536;
/** First key of pg_advisory_xact_lock(key, shard): every writer of a shard's entry holds it. */
export const CUSTOMER_SHARD_LOCK = 26_026;

/** The shard of an account: the first 16 bits of MD5(account id), as Postgres computes it. */
export function customerShard(accountId: string): number {
  return createHash('md5').update(accountId).digest().readUInt16BE(0);
}

/** The KV key of a shard's entry: `s` + 4 hex digits. */
export function shardKey(shard: number): string {
  return `s${shard.toString(16).padStart(4, '0')}`;
}

/** The shard a key names, or undefined for anything else. */
export function shardOfKey(key: string): number | undefined {
  if (key.length !== 5 || key[0] !== 's') return undefined;
  const n = Number.parseInt(key.slice(1), 16);
  return Number.isInteger(n) && n >= 0 && n < CUSTOMER_SHARDS && shardKey(n) === key ? n : undefined;
}

/** One customer as every api process knows it: which account it is, and the two names a record may use. */
export interface CustomerEntry {
  accountId: string;
  /** `cus_…` */
  customerId: string;
  /** The operator's id for it; null until one is set. */
  externalId: string | null;
}

/** A shard's entry: `[[account_id, customer_id, external_id|null], …]` sorted by account id (one text per content). */
export function encodeShard(entries: readonly CustomerEntry[]): string {
  const sorted = [...entries].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
  return JSON.stringify(sorted.map((e) => [e.accountId, e.customerId, e.externalId]));
}

/** The customers of a shard's entry; undefined when the text is not one (the registry skips it and logs). */
export function decodeShard(text: string): CustomerEntry[] | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(raw)) return undefined;
  const out: CustomerEntry[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const r = raw[i] as unknown[];
    if (!Array.isArray(r) || typeof r[0] !== 'string' || typeof r[1] !== 'string') return undefined;
    const ext = r[2];
    if (ext !== null && typeof ext !== 'string') return undefined;
    out[i] = { accountId: r[0], customerId: r[1], externalId: ext };
  }
  return out;
}
