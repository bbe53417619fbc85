import { connect, type NatsConnection } from '@nats-io/transport-node';

export type { NatsConnection };

export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({
    servers: url,
    name,
    // Reconnect forever: a NATS restart must not kill a role; readiness reports the outage meanwhile.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 5_000,
    maxPingOut: 2,
  });
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
  get revocationBucket(): string {
    return this.upper('revocations');
  }
  get usageConsumer(): string {
    return 'usage-clickhouse';
  }
}
