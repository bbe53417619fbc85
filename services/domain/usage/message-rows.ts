import { rowsByShard, scanAttributedRows, scanRows, type TouchedByAccount } from './row-scan.js';
import type { UsageShard, UsageShards } from '../../../shared/clients/usage-shards.js';
import { addCounts, type SecondCounts } from './hour-marks.js';

/** The accounts a USAGE message's rows (or one shard's part of them) belong to, and the hours each touches. */
export interface MessageRows {
  /** Account → meter → epoch minute → rows: what the insert marks (services/domain/usage/hour-marks.ts); shared by a batch. */
  accounts: TouchedByAccount;
  /** The one account of a message of one account's subject; undefined for an operator's (many accounts). */
  account: string | undefined;
  /** Rows in this message, or in this part of it. */
  count: number;
}

const ATTRIBUTED = 'customers.';

/**
 * What a message's rows may write, from its subject (shared/clients/nats.ts): `usage.<account>` — only that
 * account's rows (whoever can publish there can't forge another account's usage); `usage.customers.<emitter>` —
 * an operator's emitter's rows, each of its own customer's account. Returns the rows with the hours they
 * touch — counted into `accounts`, which a consumer shares between the messages of one insert — or why the message
 * is poison.
 */
export function readMessageRows(
  subjectRest: string,
  data: Uint8Array,
  count: number,
  accounts: TouchedByAccount = new Map(),
): { rows: MessageRows } | { poison: string } {
  if (subjectRest.startsWith(ATTRIBUTED)) {
    const bad = scanAttributedRows(data, accounts);
    return bad ? { poison: bad } : { rows: { accounts, account: undefined, count } };
  }
  const touched = accounts.get(subjectRest) ?? new Map();
  const bad = scanRows(data, subjectRest, touched);
  if (touched.size) accounts.set(subjectRest, touched);
  return bad ? { poison: bad } : { rows: { accounts, account: subjectRest, count } };
}

/** What `rows` (their batch's maps: readMessageRows) count on `shard`'s accounts: what its insert marks. */
export function countsOn(shards: UsageShards, shard: UsageShard, rows: readonly MessageRows[]): SecondCounts {
  const maps = [...new Set(rows.map((r) => r.accounts))];
  const oneShard = shards.shards.length === 1;
  if (maps.length === 1 && oneShard) return maps[0]!;
  const counts: SecondCounts = new Map();
  for (const map of maps) {
    if (oneShard) addCounts(counts, map);
    else for (const [a, meters] of map) if (shards.of(a) === shard) addCounts(counts, new Map([[a, meters]]));
  }
  return counts;
}

/** One message's rows going to one shard. */
export interface ShardPiece {
  shard: UsageShard;
  rows: MessageRows;
  data: Uint8Array;
}

/**
 * A message's rows by the ClickHouse shard owning their accounts: one piece for a message of one account (or
 * on one server); an attributed message on a cluster splits into a piece per shard its customers live on.
 */
export function shardPieces(rows: MessageRows, data: Uint8Array, shards: UsageShards): ShardPiece[] {
  if (rows.account !== undefined || shards.shards.length === 1)
    return [{ shard: shards.of(rows.account ?? ''), rows, data }];
  const parts = rowsByShard(data, (account) => shards.of(account).index);
  return [...parts].map(([index, part]) => {
    // The counts stay the batch's: each shard's insert takes its own accounts' (countsOn).
    const piece: MessageRows = { accounts: rows.accounts, account: undefined, count: newlines(part) };
    return { shard: shards.shards[index]!, rows: piece, data: part };
  });
}

function newlines(b: Uint8Array): number {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
}

/**
 * Acks of messages split into pieces: a message is acked once every piece is inserted; the first piece that
 * fails decides its fate (nak, or term for poison) and the others then only finish the bookkeeping. Messages of
 * one piece pass straight through.
 */
export class PieceAcks<M> {
  private readonly open = new Map<M, { left: number; failed: boolean }>();

  expect(m: M, pieces: number): void {
    if (pieces > 1) this.open.set(m, { left: pieces, failed: false });
  }

  /** A piece of `m` is inserted: whether `m` is to be acked now. */
  inserted(m: M): boolean {
    const e = this.open.get(m);
    if (!e) return true;
    if (--e.left === 0) this.open.delete(m);
    return e.left === 0 && !e.failed;
  }

  /** A piece of `m` failed: whether this is the first failure (the caller naks or terminates `m`). */
  failed(m: M): boolean {
    const e = this.open.get(m);
    if (!e) return true;
    const first = !e.failed;
    e.failed = true;
    if (--e.left === 0) this.open.delete(m);
    return first;
  }
}
