import { connect, type NatsConnection } from '@nats-io/transport-node';

export type { NatsConnection };

/**
 * The servers of a NATS_URL (comma-separated) and the user and password some of them carry
 * (`nats://user:password@host:port`): the client takes credentials as options, not in the URL.
 */
export function natsServerOptions(url: string): { servers: string[]; user?: string; pass?: string } {
  let user: string | undefined;
  let pass: string | undefined;
  const servers = url.split(',').map((s) => {
    const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(s.trim()) ? s.trim() : `nats://${s.trim()}`);
    if (u.username) {
      user = decodeURIComponent(u.username);
      pass = decodeURIComponent(u.password);
    }
    return `${u.protocol}//${u.host}`;
  });
  return user === undefined ? { servers } : { servers, user, pass };
}

/** Connections of this process not closed yet, by name: what a process that will not exit still holds. */
const openConnections = new Map<NatsConnection, string>();
export function openNatsConnections(): string[] {
  return [...openConnections.values()];
}

export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  const nc = await connect({
    ...natsServerOptions(url),
    name,
    // Reconnect forever: a NATS restart must not kill a role; readiness reports the outage meanwhile.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 5_000,
    maxPingOut: 2,
    // nats.js otherwise builds an Error (a stack trace) for every request to keep its caller in async traces:
    // 13 % of an api's CPU under operator-mode ingest, where each customer's rate lease is a KV request.
    noAsyncTraces: true,
  });
  openConnections.set(nc, name);
  void nc.closed().finally(() => openConnections.delete(nc));
  return nc;
}

/**
 * Stream, subject and bucket names. A namespace prefixes them so tests (and several deployments on one
 * NATS) never share state.
 */
export class NatsNames {
  constructor(readonly namespace: string) {}
  private prefix(s: string): string {
    return this.namespace ? `${this.namespace}.${s}` : s;
  }
  private upper(s: string): string {
    return this.namespace ? `${this.namespace.toUpperCase()}_${s}` : s;
  }
  get usageStream(): string {
    return this.upper('USAGE');
  }
  get eventsStream(): string {
    return this.upper('EVENTS');
  }
  /** Subject of usage records of one account: `usage.<account>`. */
  usageSubject(accountId: string): string {
    return this.prefix(`usage.${accountId}`);
  }
  get usageSubjects(): string {
    return this.prefix('usage.>');
  }
  eventSubject(type: string): string {
    return this.prefix(`events.${type}`);
  }
  get eventSubjects(): string {
    return this.prefix('events.>');
  }
  get meterBucket(): string {
    return this.upper('meters');
  }
  /** Accounts with an enabled webhook subscribed to meter.usage.recorded (key = account id). */
  get webhookUsageBucket(): string {
    return this.upper('webhook-usage');
  }
  /** Per-account limit overrides set by operators (`meterline accounts limits`); key = account id. */
  get limitsBucket(): string {
    return this.upper('limits');
  }
  /** Live api processes (key = process id, entries expire): how many share each account's rate. */
  get apiProcessBucket(): string {
    return this.upper('api-processes');
  }
  /**
   * Per-account token buckets shared by every api process, `<policy>.<account id>` (shared/limits/rate-leases.ts);
   * entries expire after RATE_BUCKET_TTL_MS idle (by then they have refilled).
   */
  get rateBucket(): string {
    return this.upper('rates');
  }
  /** Sign-in failures per client address and per (address, email), hashed keys, expiring (services/control/oauth/sign-in-throttle.ts). */
  get signInThrottleBucket(): string {
    return this.upper('sign-in-failures');
  }
  /** The customer registry: one entry per shard of the account ids (shared/customers/shards.ts). */
  get customerBucket(): string {
    return this.upper('customers');
  }
  /**
   * Subject of usage records an operator's token attributed to its customers: `usage.customers.<emitter>`. Its
   * rows may belong to any account (each row names its customer's); every other `usage.<account>` message holds
   * only that account's rows.
   */
  attributedUsageSubject(emitterAccountId: string): string {
    return this.prefix(`usage.customers.${emitterAccountId}`);
  }
  isAttributedUsageSubject(subject: string): boolean {
    return subject.startsWith(this.prefix('usage.customers.'));
  }
  /**
   * Core NATS (no stream): the accounts whose stored usage just moved, published by whoever stored it (the
   * consumer after an insert, a correction once applied) so every api's entitlement table re-reads only those.
   */
  get usageMovedSubject(): string {
    return this.prefix('signals.usage-moved');
  }
  get revocationBucket(): string {
    return this.upper('revocations');
  }
  /** Every KV bucket: migrations create them, an isolated world's drop deletes them. */
  get kvBuckets(): string[] {
    return [this.meterBucket, this.revocationBucket, this.webhookUsageBucket, this.limitsBucket, this.customerBucket];
  }
  get usageConsumer(): string {
    return 'usage-clickhouse';
  }
  /** The durable consumer on the EVENTS stream that every dispatcher process shares (webhook fan-out). */
  get fanoutConsumer(): string {
    return 'webhook-fanout';
  }
}
