import { createHmac } from 'node:crypto';
import type { Account, StripeObject } from './state.js';

/** Stripe's signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<payload>")>`. */
export function signatureHeader(secret: string, payload: string, t = Math.floor(Date.now() / 1000)): string {
  const v1 = createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');
  return `t=${t},v1=${v1}`;
}

const RETRIES = 6;

/**
 * Sends an account's events to its endpoint, each signed, in the order they were made — unless a fault says to
 * drop, duplicate or reorder them. A delivery that does not get a 2xx is retried with backoff, as Stripe does.
 */
export class WebhookSender {
  private held: StripeObject[] = [];
  /** Deliveries go out one at a time, in order: only an injected fault reorders them. */
  private queue: Promise<void> = Promise.resolve();

  private enqueue(account: Account, event: StripeObject): void {
    this.queue = this.queue.then(() => this.deliver(account, event));
  }

  send(account: Account, event: StripeObject): void {
    const f = account.faults;
    if (!account.webhook) return;
    if (f.webhook_drop > 0) {
      f.webhook_drop--;
      return;
    }
    if (f.webhook_reorder > 0) {
      f.webhook_reorder--;
      this.held.push(event);
      if (f.webhook_reorder === 0) {
        const batch = this.held.reverse();
        this.held = [];
        for (const e of batch) this.out(account, e);
      }
      return;
    }
    this.out(account, event);
  }

  private out(account: Account, event: StripeObject): void {
    this.enqueue(account, event);
    if (account.faults.webhook_duplicate > 0) {
      account.faults.webhook_duplicate--;
      this.enqueue(account, event);
    }
  }

  private async deliver(account: Account, event: StripeObject): Promise<void> {
    const endpoint = account.webhook;
    if (!endpoint) return;
    const payload = JSON.stringify(event, null, 2);
    for (let i = 0; i < RETRIES; i++) {
      try {
        const res = await fetch(endpoint.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'stripe-signature': signatureHeader(endpoint.secret, payload),
            'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          },
          body: payload,
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (res.ok) return;
      } catch {
        // retried below
      }
      await new Promise((r) => setTimeout(r, 200 * 2 ** i));
    }
  }
}
