/**
 * Slows password guessing on the sign-in form: after MAX_FAILURES wrong passwords for one email within
 * WINDOW_MS, further attempts for that email are refused (429) until the oldest failure leaves the
 * window. Per process and in memory: a guard against online guessing, not an account lock-out.
 */
const MAX_FAILURES = 10;
const WINDOW_MS = 15 * 60_000;
const MAX_TRACKED = 50_000;

export class SignInThrottle {
  private readonly failures = new Map<string, number[]>();

  /** Seconds until another attempt is allowed, or 0. */
  retryAfter(email: string, now = Date.now()): number {
    const list = this.recent(email.trim().toLowerCase(), now);
    if (list.length < MAX_FAILURES) return 0;
    return Math.max(1, Math.ceil((list[0]! + WINDOW_MS - now) / 1000));
  }

  recordFailure(email: string, now = Date.now()): void {
    const key = email.trim().toLowerCase();
    const list = this.recent(key, now);
    list.push(now);
    this.failures.delete(key);
    if (this.failures.size >= MAX_TRACKED) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(key, list);
  }

  recordSuccess(email: string): void {
    this.failures.delete(email.trim().toLowerCase());
  }

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => t > now - WINDOW_MS);
    if (list.length === 0) this.failures.delete(key);
    return list;
  }
}
