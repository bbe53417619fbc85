/**
 * A small seeded generator for the property tests of test/unit (no property-testing dependency): the same seed
 * gives the same cases, and a failing case prints its seed and index so it can be replayed.
 */
export class Seeded {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** mulberry32: uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let x = this.state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  bool(p = 0.5): boolean {
    return this.next() < p;
  }

  /** A non-negative exact decimal as text: up to `intDigits` integer digits and `scale` decimals ("0.07", "1250"). */
  decimal(intDigits: number, scale: number): string {
    const int = String(this.int(0, 10 ** this.int(0, intDigits) - 1));
    const places = this.int(0, scale);
    if (places === 0) return int;
    let frac = '';
    for (let i = 0; i < places; i++) frac += String(this.int(0, 9));
    return `${int}.${frac}`;
  }
}

/**
 * How many times over each property's own case count is searched: 1 for a developer's `npm run test:unit` (fast),
 * more where METERLINE_PROPERTY_RUNS says so (.ci/run sets it). The same seed gives the same first cases, so a
 * larger count only searches further.
 */
export const PROPERTY_RUNS = Math.max(1, Math.floor(Number(process.env.METERLINE_PROPERTY_RUNS) || 1));

/** Runs `check` on `runs` × PROPERTY_RUNS generated cases; a failure names the seed and the case. */
export function forAll<T>(
  seed: number,
  runs: number,
  generate: (g: Seeded) => T,
  check: (value: T) => string | null,
): string[] {
  const g = new Seeded(seed);
  const failures: string[] = [];
  for (let i = 0; i < runs * PROPERTY_RUNS && failures.length < 5; i++) {
    const value = generate(g);
    const problem = check(value);
    if (problem)
      failures.push(
        `seed ${seed} case ${i}: ${problem} — ${JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
      );
  }
  return failures;
}
