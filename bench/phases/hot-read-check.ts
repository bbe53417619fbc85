/**
 * The `hot-read` phase's judge (bench/phases/hot-read.ts): what a usage read of a meter under ingest may answer.
 * - During the load every answer is monotone (nothing once counted goes missing: neither the record count nor the
 *   summed value falls) and at most what had been sent when the answer arrived. The bound is the records *sent*
 *   (answered or not), not those whose 202 the generator has seen: a record is visible once the consumer inserted
 *   it, which can come before its 202 reaches the generator's thread.
 * - After the load, once the answer stopped moving, it is exact: the records ClickHouse holds for the meter
 *   (deduplicated, `FINAL`), each once, count and value — and those are every accepted record (202) and nothing
 *   that was never sent. They are exactly the accepted ones unless a request was refused: a 503 whose publish
 *   outcome stayed unknown may still count (docs/usage.md, "503 means never counted"), so the stored records lie
 *   between the accepted and the sent ones.
 * Kept apart from the phase so that test/unit/hot-read-check.test.ts can show it catches each kind of wrong answer.
 */

/** A read's answer: records counted and their summed value (the meter sums). */
export interface Answer {
  count: number;
  value: number;
}

/** At most this many wrong answers are kept word for word (all are counted). */
const KEPT = 20;

export class HotReadChecker {
  /** Answers judged during the load. */
  reads = 0;
  /** Wrong answers, all of them; `violations` says what the first few were. */
  wrong = 0;
  readonly violations: string[] = [];
  private last: Answer = { count: 0, value: 0 };

  constructor(readonly label: string) {}

  /** An answer during the load, and what had been sent by the time it arrived. */
  during(got: Answer, sent: Answer): void {
    this.reads++;
    const n = this.reads;
    if (got.count < this.last.count || got.value < this.last.value)
      this.fail(`${this.label} read ${n}: ${show(got)} below the previous answer ${show(this.last)}`);
    if (got.count > sent.count || got.value > sent.value)
      this.fail(`${this.label} read ${n}: ${show(got)} above what was sent so far ${show(sent)}`);
    this.last = got;
  }

  /**
   * The answer after the load drained, against the records stored (ClickHouse, deduplicated), accepted (202) and
   * sent: equal to the stored ones, which hold every accepted record and none beyond the sent ones.
   */
  final(got: Answer, truth: { stored: Answer; accepted: Answer; sent: Answer }): void {
    const { stored, accepted, sent } = truth;
    if (got.count !== stored.count || got.value !== stored.value)
      this.fail(`${this.label} final answer ${show(got)} is not the records stored ${show(stored)}`);
    if (got.count < this.last.count || got.value < this.last.value)
      this.fail(`${this.label} final answer ${show(got)} below an answer during the load ${show(this.last)}`);
    if (stored.count < accepted.count || stored.value < accepted.value)
      this.fail(`${this.label}: accepted records missing, ${show(stored)} stored of ${show(accepted)} accepted`);
    if (stored.count > sent.count || stored.value > sent.value)
      this.fail(`${this.label}: more stored than sent, ${show(stored)} stored of ${show(sent)} sent`);
  }

  get ok(): boolean {
    return this.wrong === 0;
  }

  private fail(message: string): void {
    this.wrong++;
    if (this.violations.length < KEPT) this.violations.push(message);
  }
}

const show = (a: Answer) => `${a.count} records / value ${a.value}`;
