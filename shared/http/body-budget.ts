import { OverloadedError } from '../errors.js';

/** Why bytes were not reserved: the process's budget is used up, or the caller's share of it is. */
export type BudgetRefusal = 'full' | 'caller';

/** The caller of a public route (OAuth endpoints, sign-in): its client address. */
export const addressCaller = (address: string): string => `address:${address}`;
/** An authenticated route's caller before its token was checked: its address, apart from public-route traffic. */
export const unverifiedCaller = (address: string): string => `unverified:${address}`;
/** An authenticated caller: its account. */
export const accountCaller = (accountId: string): string => `account:${accountId}`;

/**
 * The request body bytes a process holds at once (MAX_BUFFERED_REQUEST_BYTES) and how much of it one caller
 * may hold (MAX_BUFFERED_REQUEST_BYTES_PER_CALLER): a flood of slow large bodies from one account or one
 * address gets 503 `overloaded` past its share, while every other caller still finds room. A caller is an
 * account once its token is checked, its client address before that (shared/http/server.ts).
 */
export class BodyBudget {
  private used = 0;
  private readonly held = new Map<string, number>();

  constructor(
    readonly max: number,
    readonly perCaller: number,
  ) {}

  /** Bytes reserved now, across every caller. */
  get bytes(): number {
    return this.used;
  }

  /** Callers holding reserved bytes now. */
  get callers(): number {
    return this.held.size;
  }

  heldBy(caller: string): number {
    return this.held.get(caller) ?? 0;
  }

  reserve(caller: string, n: number): BudgetRefusal | undefined {
    if (n <= 0) return undefined;
    const mine = this.held.get(caller) ?? 0;
    if (mine + n > this.perCaller) return 'caller';
    if (this.used + n > this.max) return 'full';
    this.used += n;
    this.held.set(caller, mine + n);
    return undefined;
  }

  release(caller: string, n: number): void {
    if (n <= 0) return;
    this.used -= n;
    const left = (this.held.get(caller) ?? 0) - n;
    if (left > 0) this.held.set(caller, left);
    else this.held.delete(caller);
  }

  /** Moves `n` reserved bytes from one caller to another (a request whose token was just checked). */
  transfer(from: string, to: string, n: number): BudgetRefusal | undefined {
    if (n <= 0 || from === to) return undefined;
    if ((this.held.get(to) ?? 0) + n > this.perCaller) return 'caller';
    this.release(from, n);
    this.used += n;
    this.held.set(to, (this.held.get(to) ?? 0) + n);
    return undefined;
  }
}

/** The 503 of a refused reservation: the same code either way, the detail says whose budget is spent. */
export function overloaded(refusal: BudgetRefusal): OverloadedError {
  return new OverloadedError(
    refusal === 'caller'
      ? 'Too many request bodies of yours are being received at once (your share of what this server buffers); finish or close them, then retry.'
      : 'The server is taking in too much at once; retry shortly.',
  );
}
