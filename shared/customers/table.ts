/**
 * Every customer of the deployment in one process's memory, for the usage hot path: a record naming its
 * customer by external id or `cus_` id becomes that customer's account with one probe of a compact index —
 * never a Postgres query. Built to hold a million customers in well under 200 bytes each (bench `attributed`
 * measures it): a slot per customer holding its account id string, and two CompactKeyIndex (external ids,
 * customer ids) that keep the keys as bytes in shared Buffers.
 *
 * The table is filled shard by shard (shared/customers/shards.ts): applyShard() makes one shard's customers
 * exactly the given list — new ones get a slot, changed ones are updated, missing ones are released.
 */
import { CompactKeyIndex } from './key-index.js';
import { CUSTOMER_SHARDS, type CustomerEntry } from './shards.js';

const NONE: readonly number[] = [];

export class CustomerTable {
  /** slot → account id ('' for a free slot). */
  private readonly accounts: string[] = [];
  private readonly byExternalId = new CompactKeyIndex();
  private readonly byCustomerId = new CompactKeyIndex();
  /** shard → its customers' slots. */
  private readonly shardSlots: (number[] | undefined)[] = new Array(CUSTOMER_SHARDS);
  private readonly free: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The account of the customer with this external id. */
  accountOfExternalId(externalId: string): string | undefined {
    const slot = this.byExternalId.get(externalId);
    return slot === undefined ? undefined : this.accounts[slot];
  }

  /** The account of the customer with this `cus_` id. */
  accountOfCustomerId(customerId: string): string | undefined {
    const slot = this.byCustomerId.get(customerId);
    return slot === undefined ? undefined : this.accounts[slot];
  }

  /**
   * The slot of the customer with this external id (or `cus_` id): a small integer, stable while the customer
   * exists (a released slot is reused for another customer), so the hot path can keep per-customer state in an
   * array beside it instead of a map keyed by account (rate-limiter.ts takeEach) — checked against accountAt.
   */
  slotOfExternalId(externalId: string): number | undefined {
    return this.byExternalId.get(externalId);
  }

  slotOfCustomerId(customerId: string): number | undefined {
    return this.byCustomerId.get(customerId);
  }

  /** The account in `slot` ('' for a free slot). */
  accountAt(slot: number): string {
    return this.accounts[slot]!;
  }

  /** Makes shard `shard` hold exactly `entries` (an empty list: no customers). */
  applyShard(shard: number, entries: readonly CustomerEntry[]): void {
    const old = this.shardSlots[shard] ?? NONE;
    const kept = new Array<number>(entries.length);
    let reused: Set<number> | undefined;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      let slot = -1;
      for (const s of old) {
        if (this.accounts[s] === e.accountId) {
          slot = s;
          break;
        }
      }
      if (slot === -1) slot = this.add(e);
      else {
        (reused ??= new Set()).add(slot);
        this.update(slot, e);
      }
      kept[i] = slot;
    }
    for (const s of old) if (!reused?.has(s)) this.release(s);
    this.shardSlots[shard] = kept.length ? kept : undefined;
  }

  private add(e: CustomerEntry): number {
    const slot = this.free.length ? this.free.pop()! : this.accounts.length;
    this.accounts[slot] = e.accountId;
    if (e.externalId !== null) this.byExternalId.set(e.externalId, slot);
    this.byCustomerId.set(e.customerId, slot);
    this.count++;
    return slot;
  }

  private update(slot: number, e: CustomerEntry): void {
    if (!this.byExternalId.slotHas(slot, e.externalId)) {
      if (e.externalId === null) this.byExternalId.deleteSlot(slot);
      else this.byExternalId.set(e.externalId, slot);
    }
    // A customer's `cus_` id never changes; should an entry say otherwise, the entry wins.
    if (!this.byCustomerId.slotHas(slot, e.customerId)) this.byCustomerId.set(e.customerId, slot);
  }

  private release(slot: number): void {
    this.byExternalId.deleteSlot(slot);
    this.byCustomerId.deleteSlot(slot);
    this.accounts[slot] = '';
    this.free.push(slot);
    this.count--;
  }
}
