import type { Infra } from '../../../shared/infra.js';
import type { Component } from '../role.js';
import { DEPLOYMENT_SUBSCRIBER, syncUsageSubscriber } from '../../domain/webhooks/usage-subscribers.js';
import { createOutboxRelay, type OutboxRelayOptions } from './outbox-relay.js';
import { EventFanout, type FanoutOptions } from './event-fanout.js';
import { WebhookDelivery, type DeliveryOptions } from './webhook-delivery.js';
import { DispatcherHousekeeping } from './housekeeping.js';

export interface DispatcherOptions {
  relay?: OutboxRelayOptions;
  fanout?: Partial<FanoutOptions>;
  delivery?: Partial<DeliveryOptions>;
  housekeepingIntervalMs?: number;
}

export interface DispatcherParts {
  relay: ReturnType<typeof createOutboxRelay>;
  fanout: EventFanout;
  delivery: WebhookDelivery;
  housekeeping: DispatcherHousekeeping;
  /** Start order; the role stops them in reverse (sending stops last, after nothing new arrives). */
  components: Component[];
}

/** The dispatcher role's parts: outbox → EVENTS relay, EVENTS → deliveries fan-out, delivery, housekeeping. */
export function createDispatcherParts(infra: Infra, opts: DispatcherOptions = {}): DispatcherParts {
  const delivery = new WebhookDelivery(infra, {
    ...opts.delivery,
    // A 410 may end an account's meter.usage.recorded subscription.
    onWebhooksDisabled: async (accounts) => {
      for (const a of [...accounts, DEPLOYMENT_SUBSCRIBER]) await syncUsageSubscriber(infra, a);
    },
  });
  const clock = opts.delivery?.clock ? { clock: opts.delivery.clock } : {};
  const fanout = new EventFanout(infra, { ...clock, ...opts.fanout, onRecorded: () => delivery.wake() });
  const relay = createOutboxRelay(infra, opts.relay);
  const housekeeping = new DispatcherHousekeeping(infra, opts.housekeepingIntervalMs);
  return { relay, fanout, delivery, housekeeping, components: [delivery, fanout, relay, housekeeping] };
}
