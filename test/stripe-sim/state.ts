import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * The simulator's memory: one Account per secret key, as each Stripe account sees only its own objects. Kept in
 * memory and, with a state file, written after every change (so a restarted simulator still knows every charge).
 */
export type StripeObject = Record<string, unknown> & { id: string; object: string };

export interface IdempotentResponse {
  fingerprint: string;
  status: number;
  body: unknown;
}

export interface Faults {
  /** The next N API requests are never answered (the connection is closed after `timeout_ms`). */
  timeout: number;
  timeout_ms: number;
  /** The next N API requests fail with 500 api_error before anything is done. */
  server_error: number;
  /** The next N API requests are carried out, then the connection is closed without a response. */
  lose_response: number;
  /**
   * This percentage of PaymentIntent creations (chosen by their Idempotency-Key, so every retry of a chosen one too)
   * are carried out and their response lost: a charge made whose answer never comes. 0 = none.
   */
  lose_charge_response_percent: number;
  /** The next N webhooks are never sent. */
  webhook_drop: number;
  /** The next N webhooks are sent twice. */
  webhook_duplicate: number;
  /** The next N webhooks are held back, then sent newest first once the Nth arrives. */
  webhook_reorder: number;
}

export const NO_FAULTS: Faults = {
  timeout: 0,
  timeout_ms: 2000,
  server_error: 0,
  lose_response: 0,
  lose_charge_response_percent: 0,
  webhook_drop: 0,
  webhook_duplicate: 0,
  webhook_reorder: 0,
};

export interface Account {
  objects: Record<string, StripeObject>;
  /** Card numbers behind payment methods (never in a response) and whether the card was set up for off-session use. */
  cards: Record<string, { number: string; setUp: boolean }>;
  /** Events, oldest first. */
  events: string[];
  idempotency: Record<string, IdempotentResponse>;
  webhook: { url: string; secret: string } | null;
  faults: Faults;
  /** Count of API requests that reached a handler, by "METHOD path-pattern"; `lost` counts responses lost by faults. */
  requests: Record<string, number>;
}

export function newAccount(): Account {
  return { objects: {}, cards: {}, events: [], idempotency: {}, webhook: null, faults: { ...NO_FAULTS }, requests: {} };
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export function newId(prefix: string): string {
  const bytes = randomBytes(24);
  let s = '';
  for (const b of bytes) s += ALPHABET[b % ALPHABET.length];
  return `${prefix}_${s}`;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

const WRITE_EVERY_MS = 250;

export class SimState {
  private accounts = new Map<string, Account>();
  private dirty = false;
  private exitHook = false;

  constructor(
    private readonly file: string | null,
    private readonly defaultWebhook: { url: string; secret: string } | null,
  ) {
    if (file) {
      try {
        const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Account>;
        // Faults are instructions to this process only: a restart starts without any.
        for (const [k, a] of Object.entries(saved))
          this.accounts.set(k, { ...newAccount(), ...a, faults: { ...NO_FAULTS } });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
  }

  account(key: string): Account {
    let a = this.accounts.get(key);
    if (!a) {
      a = newAccount();
      a.webhook = this.defaultWebhook;
      this.accounts.set(key, a);
    }
    return a;
  }

  /**
   * Writes the state file at most every WRITE_EVERY_MS (the whole state is rewritten: writing it after every request
   * made the simulator, not meterline, the bottleneck of a large billing run), and when the process exits (SIGTERM
   * → exit in main.ts). Atomic rename: a crash never leaves half a file.
   */
  changed(): void {
    if (!this.file || this.dirty) return;
    this.dirty = true;
    if (!this.exitHook) {
      this.exitHook = true;
      process.once('exit', () => this.flush());
    }
    setTimeout(() => this.flush(), WRITE_EVERY_MS).unref();
  }

  flush(): void {
    if (!this.file || !this.dirty) return;
    this.dirty = false;
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.accounts)));
    renameSync(tmp, this.file);
  }
}
