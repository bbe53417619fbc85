import type { AccountProtection } from '../../shared/limits/protection.js';
import type { NatsNames } from '../../shared/clients/nats.js';
import type { MeterRegistry } from '../../shared/meters/registry.js';
import type { CustomerRegistry } from '../../shared/customers/registry.js';
import type { UsagePublisher } from './publisher.js';

/** What the ingress handlers use: no Postgres on this path. */
export interface IngressDeps {
  registry: MeterRegistry;
  /** Every customer (operator mode): attributed records find their account here, never in Postgres. */
  customers: CustomerRegistry;
  publisher: UsagePublisher;
  names: NatsNames;
  /** The account's ingest rate: records counted before any meter lookup or publish. */
  protection: AccountProtection;
}
