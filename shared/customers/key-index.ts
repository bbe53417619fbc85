/**
 * A compact map from short ASCII strings (external ids, `cus_` ids) to registry slots. A JS Map costs ~70–90
 * bytes per key (the key string's header and padding, the entry, the table's slack); here a key costs its bytes
 * (with a length byte, in whole 32-bit words) in one shared Int32Array, four bytes of position, and ~8 bytes of an
 * open-addressing table (linear probing over an Int32Array, load ≤ ½) — the customer registry holds a million
 * customers in well under 200 bytes each with two of these (bench `attributed` measures it).
 *
 * A lookup is on every attributed usage record's hot path (`node dist/bench/attribution-cost.js`). It reads the
 * JS string's character codes once — no allocation — packing them four to a word as it hashes them (charCodeAt
 * is the costly part: a check of the string's representation per character), and compares those words with the
 * stored key's, a word at a time. Each table entry carries seven bits of its key's hash beside the slot, so a
 * probe past another key's entry is settled there, without reading that key (operators' ids share long
 * prefixes: `cust-000123`, `cust-000124`).
 *
 * One key per slot; at most MAX_SLOTS slots. Keys that are not ASCII, or longer than 255 characters, go to a
 * plain Map.
 */
const EMPTY = -1;
/** A table entry: the top 7 bits of its key's hash, then slot + 1 in the low 25 bits; 0 = empty. */
const SLOT_BITS = 25;
const SLOT_MASK = (1 << SLOT_BITS) - 1;
const FINGERPRINT = ~SLOT_MASK;
/** Slots an index can hold (33,554,431): a registry of 200-byte customers would need 6.7 GB first. */
export const MAX_SLOTS = SLOT_MASK;
const MAX_KEY_LENGTH = 255;

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** MurmurHash3 (x86, 32-bit): one word of the key into `h`. */
function round(h: number, k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, C2);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** MurmurHash3's finaliser. */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A key as stored: its length byte, then its bytes, little-endian in words, the last one padded with zeros. */
const wordsOf = (length: number) => (length + 4) >>> 2;

/** The words of the key hashOf last hashed. */
const keyWords = new Int32Array(wordsOf(MAX_KEY_LENGTH));

/**
 * The hash of a key this index stores (ASCII, ≤ 255 characters), its words left in keyWords; -1 for any other
 * key. One pass over the characters; the same value as hashWords of the stored key (an ASCII character's code
 * is its byte).
 */
function hashOf(key: string): number {
  const n = key.length;
  if (n > MAX_KEY_LENGTH) return -1;
  let high = 0;
  let i = 0;
  // The first word: the length and up to three characters.
  let word = n;
  for (let shift = 8; shift < 32 && i < n; shift += 8) {
    const c = key.charCodeAt(i++);
    high |= c;
    word |= c << shift;
  }
  keyWords[0] = word;
  let h = round(0, word);
  let w = 1;
  // Then four characters a word (unrolled: a branch per character cost more than the reads).
  for (const whole = n - 3; i < whole; i += 4) {
    const a = key.charCodeAt(i);
    const b = key.charCodeAt(i + 1);
    const c = key.charCodeAt(i + 2);
    const d = key.charCodeAt(i + 3);
    high |= a | b | c | d;
    word = a | (b << 8) | (c << 16) | (d << 24);
    keyWords[w++] = word;
    h = round(h, word);
  }
  // The last one to three, padded with zeros.
  if (i < n) {
    word = 0;
    for (let shift = 0; i < n; shift += 8) {
      const c = key.charCodeAt(i++);
      high |= c;
      word |= c << shift;
    }
    keyWords[w] = word;
    h = round(h, word);
  }
  return high > 0x7f ? -1 : finish(h);
}

/** hashOf of the key stored at `at`. */
function hashWords(pool: Int32Array, at: number): number {
  let h = 0;
  for (let i = at, end = at + wordsOf(pool[at]! & 0xff); i < end; i++) h = round(h, pool[i]!);
  return finish(h);
}

export class CompactKeyIndex {
  /** Keys (wordsOf), appended; a deleted key's words stay as garbage until compaction. */
  private pool = new Int32Array(256);
  private poolEnd = 0;
  private garbage = 0;
  /** slot → offset of its key's first word in the pool, EMPTY when the slot has none (or its key is in `others`). */
  private offsets = new Int32Array(64).fill(EMPTY);
  /** Open addressing: fingerprint | slot + 1, 0 = empty. */
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
    const fingerprint = hash & FINGERPRINT;
    const words = wordsOf(key.length);
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const entry = table[i]!;
      if (entry === 0) return undefined;
      if ((entry & FINGERPRINT) !== fingerprint) continue;
      const slot = (entry & SLOT_MASK) - 1;
      if (this.holds(slot, words)) return slot;
    }
  }

  /** Whether `slot`'s key is `key` (null: the slot has none). */
  slotHas(slot: number, key: string | null): boolean {
    if (key === null) return !this.hasKey(slot);
    return this.get(key) === slot;
  }

  /** Gives `slot` the key `key`, replacing the slot's previous key; a slot that held `key` loses it. */
  set(key: string, slot: number): void {
    if (!(slot >= 0 && slot < MAX_SLOTS)) throw new RangeError(`slot ${slot} is outside 0…${MAX_SLOTS - 1}`);
    this.deleteSlot(slot);
    const holder = this.get(key);
    if (holder !== undefined) this.deleteSlot(holder);
    if (hashOf(key) === -1) {
      this.others.set(key, slot);
      return;
    }
    const words = wordsOf(key.length);
    this.reserveSlot(slot);
    this.reservePool(words);
    const at = this.poolEnd;
    const pool = this.pool;
    for (let i = 0; i < words; i++) pool[at + i] = keyWords[i]!;
    this.poolEnd += words;
    this.offsets[slot] = at;
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
    while ((table[i]! & SLOT_MASK) !== slot + 1) i = (i + 1) & mask;
    // Backward-shift deletion: later entries of the probe run move into the hole, so there are no tombstones.
    table[i] = 0;
    for (let j = (i + 1) & mask; table[j] !== 0; j = (j + 1) & mask) {
      const entry = table[j]!;
      const home = this.hashAt((entry & SLOT_MASK) - 1) & mask;
      const homeInRun = i < j ? home > i && home <= j : home > i || home <= j;
      if (!homeInRun) {
        table[i] = entry;
        table[j] = 0;
        i = j;
      }
    }
    this.used--;
    this.garbage += wordsOf(this.pool[this.offsets[slot]!]! & 0xff);
    this.offsets[slot] = EMPTY;
  }

  private hasKey(slot: number): boolean {
    if (slot < this.offsets.length && this.offsets[slot] !== EMPTY) return true;
    for (const s of this.others.values()) if (s === slot) return true;
    return false;
  }

  /** Whether `slot`'s key is the one hashOf left in keyWords (`words` long): its first word holds the length. */
  private holds(slot: number, words: number): boolean {
    const pool = this.pool;
    const at = this.offsets[slot]!;
    for (let i = 0; i < words; i++) if (pool[at + i] !== keyWords[i]) return false;
    return true;
  }

  private hashAt(slot: number): number {
    return hashWords(this.pool, this.offsets[slot]!);
  }

  private place(slot: number): void {
    const hash = this.hashAt(slot);
    const mask = this.table.length - 1;
    let i = hash & mask;
    while (this.table[i] !== 0) i = (i + 1) & mask;
    this.table[i] = (hash & FINGERPRINT) | (slot + 1);
  }

  private grow(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2);
    for (const entry of old) if (entry !== 0) this.place((entry & SLOT_MASK) - 1);
  }

  private reserveSlot(slot: number): void {
    if (slot < this.offsets.length) return;
    const n = Math.min(MAX_SLOTS, Math.max(slot + 1, Math.ceil(this.offsets.length * 1.5)));
    const offsets = new Int32Array(n).fill(EMPTY);
    offsets.set(this.offsets);
    this.offsets = offsets;
  }

  /** Room for `words` more; compacts first when half the pool is garbage, else grows by half. */
  private reservePool(words: number): void {
    if (this.poolEnd + words <= this.pool.length) return;
    const live = this.poolEnd - this.garbage;
    const size = Math.max(
      live + words,
      this.garbage * 2 >= this.poolEnd ? this.pool.length : Math.ceil(this.pool.length * 1.5),
    );
    const next = new Int32Array(size);
    let end = 0;
    for (let s = 0; s < this.offsets.length; s++) {
      const at = this.offsets[s]!;
      if (at === EMPTY) continue;
      const n = wordsOf(this.pool[at]! & 0xff);
      for (let i = 0; i < n; i++) next[end + i] = this.pool[at + i]!;
      this.offsets[s] = end;
      end += n;
    }
    this.pool = next;
    this.poolEnd = end;
    this.garbage = 0;
  }
}
