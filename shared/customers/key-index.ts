/**
 * A compact map from short ASCII strings (external ids, `cus_` ids) to registry slots. A JS Map costs ~70–90
 * bytes per key (the key string's header and padding, the entry, the table's slack); here a key costs its bytes
 * in one shared Buffer, five bytes of position and length, and ~8 bytes of an open-addressing table (linear
 * probing over an Int32Array, load ≤ ½) — the customer registry holds a million customers in well under
 * 200 bytes each with two of these (bench `attributed` measures it). Lookups hash the JS string's character
 * codes and compare bytes: no allocation, about what Map.get costs for a freshly parsed string.
 *
 * One key per slot. Keys that are not ASCII, or longer than 255 characters, go to a plain Map.
 */
const EMPTY = -1;

/** FNV-1a, then MurmurHash3's finaliser: a multiply only carries upward, so FNV's low bits — the table index — need the mix. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The hash of a key this index stores as bytes (ASCII, ≤ 255 characters); -1 for any other key. One pass. */
function hashOf(key: string): number {
  if (key.length > 255) return -1;
  let h = 0x811c9dc5;
  let high = 0;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    high |= c;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return high > 0x7f ? -1 : mix(h);
}

export class CompactKeyIndex {
  /** Key bytes, appended; a deleted key's bytes stay as garbage until compaction. */
  private pool = Buffer.alloc(1024);
  private poolEnd = 0;
  private garbage = 0;
  /** slot → offset of its key in the pool, EMPTY when the slot has none (or its key is in `others`). */
  private offsets = new Int32Array(64).fill(EMPTY);
  private lengths = new Uint8Array(64);
  /** Open addressing: slot + 1, 0 = empty. */
  private table = new Int32Array(64);
  private used = 0;
  private readonly others = new Map<string, number>();

  get size(): number {
    return this.used + this.others.size;
  }

  get(key: string): number | undefined {
    const hash = hashOf(key);
    if (hash === -1) return this.others.get(key);
    const table = this.table;
    const mask = table.length - 1;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const entry = table[i]!;
      if (entry === 0) return undefined;
      if (this.holds(entry - 1, key)) return entry - 1;
    }
  }

  /** Whether `slot`'s key is `key` (null: the slot has none). */
  slotHas(slot: number, key: string | null): boolean {
    if (key === null) return !this.hasKey(slot);
    return this.get(key) === slot;
  }

  /** Gives `slot` the key `key`, replacing the slot's previous key; a slot that held `key` loses it. */
  set(key: string, slot: number): void {
    this.deleteSlot(slot);
    const holder = this.get(key);
    if (holder !== undefined) this.deleteSlot(holder);
    if (hashOf(key) === -1) {
      this.others.set(key, slot);
      return;
    }
    this.reserveSlot(slot);
    this.reservePool(key.length);
    const at = this.poolEnd;
    for (let i = 0; i < key.length; i++) this.pool[at + i] = key.charCodeAt(i);
    this.poolEnd += key.length;
    this.offsets[slot] = at;
    this.lengths[slot] = key.length;
    if ((this.used + 1) * 2 > this.table.length) this.grow();
    this.place(slot);
    this.used++;
  }

  /** Forgets `slot`'s key, if it has one. */
  deleteSlot(slot: number): void {
    if (slot >= this.offsets.length || this.offsets[slot] === EMPTY) {
      if (this.others.size) for (const [k, s] of this.others) if (s === slot) this.others.delete(k);
      return;
    }
    const table = this.table;
    const mask = table.length - 1;
    let i = this.hashAt(slot) & mask;
    while (table[i] !== slot + 1) i = (i + 1) & mask;
    // Backward-shift deletion: later entries of the probe run move into the hole, so there are no tombstones.
    table[i] = 0;
    for (let j = (i + 1) & mask; table[j] !== 0; j = (j + 1) & mask) {
      const entry = table[j]!;
      const home = this.hashAt(entry - 1) & mask;
      const homeInRun = i < j ? home > i && home <= j : home > i || home <= j;
      if (!homeInRun) {
        table[i] = entry;
        table[j] = 0;
        i = j;
      }
    }
    this.used--;
    this.garbage += this.lengths[slot]!;
    this.offsets[slot] = EMPTY;
  }

  private hasKey(slot: number): boolean {
    if (slot < this.offsets.length && this.offsets[slot] !== EMPTY) return true;
    for (const s of this.others.values()) if (s === slot) return true;
    return false;
  }

  private holds(slot: number, key: string): boolean {
    if (this.lengths[slot] !== key.length) return false;
    const pool = this.pool;
    const at = this.offsets[slot]!;
    for (let i = 0; i < key.length; i++) if (pool[at + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  private hashAt(slot: number): number {
    const pool = this.pool;
    const at = this.offsets[slot]!;
    const end = at + this.lengths[slot]!;
    let h = 0x811c9dc5;
    for (let i = at; i < end; i++) h = Math.imul(h ^ pool[i]!, 0x01000193);
    return mix(h);
  }

  private place(slot: number): void {
    const mask = this.table.length - 1;
    let i = this.hashAt(slot) & mask;
    while (this.table[i] !== 0) i = (i + 1) & mask;
    this.table[i] = slot + 1;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2);
    for (const entry of old) if (entry !== 0) this.place(entry - 1);
  }

  private reserveSlot(slot: number): void {
    if (slot < this.offsets.length) return;
    const n = Math.max(slot + 1, Math.ceil(this.offsets.length * 1.5));
    const offsets = new Int32Array(n).fill(EMPTY);
    offsets.set(this.offsets);
    const lengths = new Uint8Array(n);
    lengths.set(this.lengths);
    this.offsets = offsets;
    this.lengths = lengths;
  }

  /** Room for `bytes` more; compacts first when half the pool is garbage, else grows by half. */
  private reservePool(bytes: number): void {
    if (this.poolEnd + bytes <= this.pool.length) return;
    const live = this.poolEnd - this.garbage;
    const size = Math.max(
      live + bytes,
      this.garbage * 2 >= this.poolEnd ? this.pool.length : Math.ceil(this.pool.length * 1.5),
    );
    const next = Buffer.alloc(size);
    let end = 0;
    for (let s = 0; s < this.offsets.length; s++) {
      const at = this.offsets[s]!;
      if (at === EMPTY) continue;
      this.pool.copy(next, end, at, at + this.lengths[s]!);
      this.offsets[s] = end;
      end += this.lengths[s]!;
    }
    this.pool = next;
    this.poolEnd = end;
    this.garbage = 0;
  }
}
