/**
 * 53-bit hashes (non-negative integers below 2^53) kept in typed arrays, open addressing with linear probing: a
 * map to 31-bit values (HashIndex53) and a set over it (HashSet53). The identity window's memory holds millions of
 * them per account (recent-ids.ts): in a `Set<number>` each one above 2^31 is a heap-allocated number, which the
 * garbage collector then walks — at 100,000 ids/s a tenth of the consumer's time. Here they are plain words: no
 * allocation per entry, none for the collector to trace. Entries are never removed one by one (the window
 * rebuilds an account's table when it lets go of hours).
 */
const EMPTY = 0xffffffff; // high word of no hash: hashes are below 2^53, whose high word is below 2^21
const MIN_CAPACITY = 1 << 10;
const MAX_LOAD = 0.5;

/** A set of hashes: a HashIndex53 whose values say nothing. */
export class HashSet53 {
  private readonly index: HashIndex53;

  constructor(capacity = MIN_CAPACITY) {
    this.index = new HashIndex53(capacity);
  }

  get size(): number {
    return this.index.size;
  }

  has(hash: number): boolean {
    return this.index.get(hash) !== -1;
  }

  add(hash: number): void {
    this.index.set(hash, 0);
  }

  *[Symbol.iterator](): IterableIterator<number> {
    const all: number[] = [];
    this.index.forEach((hash) => all.push(hash));
    yield* all;
  }
}

/** The slot of a hash: its words mixed (the low word alone is FNV output already; the mix spreads the high bits in). */
function slotOf(hi: number, lo: number): number {
  return Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) >>> 0;
}

/**
 * A map from 53-bit hashes to non-negative 31-bit integers, in the same typed-array layout as HashSet53: no
 * object per entry. A batch's first occurrences by hash (claims.ts: row numbers), the window's memory of an
 * account (recent-ids.ts: the last hour each hash was claimed in).
 */
export class HashIndex53 {
  private high: Uint32Array;
  private low: Uint32Array;
  private value: Int32Array;
  private mask: number;
  private count = 0;

  constructor(capacity = MIN_CAPACITY) {
    let size = MIN_CAPACITY;
    while (size * MAX_LOAD < capacity) size *= 2;
    this.high = new Uint32Array(size).fill(EMPTY);
    this.low = new Uint32Array(size);
    this.value = new Int32Array(size);
    this.mask = size - 1;
  }

  get size(): number {
    return this.count;
  }

  /** The value of `hash`, or −1. */
  get(hash: number): number {
    const hi = Math.floor(hash / 0x100000000);
    const lo = hash >>> 0;
    for (let i = slotOf(hi, lo) & this.mask; ; i = (i + 1) & this.mask) {
      const h = this.high[i]!;
      if (h === EMPTY) return -1;
      if (h === hi && this.low[i] === lo) return this.value[i]!;
    }
  }

  set(hash: number, value: number): void {
    if (!Number.isSafeInteger(hash) || hash < 0) throw new RangeError(`not a 53-bit hash: ${hash}`);
    if (this.count + 1 > (this.mask + 1) * MAX_LOAD) this.grow();
    if (this.put(Math.floor(hash / 0x100000000), hash >>> 0, value)) this.count++;
  }

  /** Sets `hash`'s value to `value` unless it holds a larger one already (one probe). */
  setMax(hash: number, value: number): void {
    const hi = Math.floor(hash / 0x100000000);
    const lo = hash >>> 0;
    for (let i = slotOf(hi, lo) & this.mask; ; i = (i + 1) & this.mask) {
      const h = this.high[i]!;
      if (h === EMPTY) break;
      if (h === hi && this.low[i] === lo) {
        if (this.value[i]! < value) this.value[i] = value;
        return;
      }
    }
    this.set(hash, value);
  }

  /** Every entry, in no order. */
  forEach(each: (hash: number, value: number) => void): void {
    for (let i = 0; i <= this.mask; i++)
      if (this.high[i] !== EMPTY) each(this.high[i]! * 0x100000000 + this.low[i]!, this.value[i]!);
  }

  /** Sets (hi, lo)'s value; true when it was not there. */
  private put(hi: number, lo: number, value: number): boolean {
    for (let i = slotOf(hi, lo) & this.mask; ; i = (i + 1) & this.mask) {
      const h = this.high[i]!;
      if (h === EMPTY) {
        this.high[i] = hi;
        this.low[i] = lo;
        this.value[i] = value;
        return true;
      }
      if (h === hi && this.low[i] === lo) {
        this.value[i] = value;
        return false;
      }
    }
  }

  private grow(): void {
    const { high, low, value } = this;
    const size = (this.mask + 1) * 2;
    this.high = new Uint32Array(size).fill(EMPTY);
    this.low = new Uint32Array(size);
    this.value = new Int32Array(size);
    this.mask = size - 1;
    for (let i = 0; i < high.length; i++) if (high[i] !== EMPTY) this.put(high[i]!, low[i]!, value[i]!);
  }
}
