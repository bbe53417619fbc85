import type { NatsConnection } from '../../../shared/clients/nats.js';
import type { Logger } from '../../../shared/logging.js';

/** Told the accounts whose stored usage just moved — once the change is readable in ClickHouse, never before. */
export interface UsageMoved {
  moved(accounts: Iterable<string>): void;
}

/** Signals coalesce this long: at most one message (or one per MAX_MESSAGE_BYTES of ids) per interval. */
export const USAGE_MOVED_COALESCE_MS = 100;
/** Well under NATS's default max_payload (1 MiB): 10,000 account ids are ~300 KB. */
const MAX_MESSAGE_BYTES = 256 * 1024;

/**
 * The "usage moved" signal (docs/entitlements.md): a fire-and-forget core NATS message on
 * NatsNames.usageMovedSubject naming, newline-separated and deduplicated, the accounts whose stored usage moved
 * since the last one. Readers that hold usage in memory (the api's entitlement table) re-read only those; a lost
 * message is healed by their periodic full read, so nothing here retries.
 */
export class UsageMovedPublisher implements UsageMoved {
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly subject: string,
    private readonly log: Logger,
    private readonly coalesceMs = USAGE_MOVED_COALESCE_MS,
  ) {}

  moved(accounts: Iterable<string>): void {
    for (const a of accounts) this.pending.add(a);
    if (this.pending.size > 0) this.timer ??= setTimeout(() => this.flush(), this.coalesceMs);
  }

  /** Publishes what is pending now (also on stop: the last batch's accounts go out before the process ends). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const accounts = [...this.pending];
    this.pending = new Set();
    try {
      for (const text of usageMovedMessages(accounts)) this.nc.publish(this.subject, text);
    } catch (err) {
      // A closed or draining connection: readers fall back to their full read.
      this.log.warn({ err, accounts: accounts.length }, 'usage moved signal not sent');
    }
  }
}

/** The messages naming `accounts`: newline-separated ids, each message at most MAX_MESSAGE_BYTES. */
export function usageMovedMessages(accounts: readonly string[], maxBytes = MAX_MESSAGE_BYTES): string[] {
  const out: string[] = [];
  let part: string[] = [];
  let bytes = 0;
  for (const a of accounts) {
    if (part.length > 0 && bytes + a.length + 1 > maxBytes) {
      out.push(part.join('\n'));
      part = [];
      bytes = 0;
    }
    part.push(a);
    bytes += a.length + 1;
  }
  if (part.length > 0) out.push(part.join('\n'));
  return out;
}

/** The accounts a usage moved message names. */
export function parseUsageMoved(text: string): string[] {
  return text.split('\n').filter((a) => a.length > 0);
}
