import type { Infra } from '../../../shared/infra.js';
import type { Component } from '../role.js';
import { DEPLOYMENT_SUBSCRIBER, syncUsageSubscriber } from '../../domain/webhooks/usage-subscribers.js';
import { createOutboxRelay, type OutboxRelayOptions } from './outbox-relay.js';
import { EventFanout, type FanoutOptions } from './event-fanout.js';
import { WebhookDelivery, type DeliveryOptions } from './webhook-delivery.js';
import { DispatcherHousekeeping } from './housekeeping.js';
import { MailDelivery, type MailDeliveryOptions } from './mail-delivery.js';
import { recordEmails } from '../../domain/emails/store.js';

export interface DispatcherOptions {
  relay?: OutboxRelayOptions;
  fanout?: Partial<FanoutOptions>;
  delivery?: Partial<DeliveryOptions>;
  mail?: Partial<MailDeliveryOptions>;
  housekeepingIntervalMs?: number;
}

export interface DispatcherParts {
  relay: ReturnType<typeof createOutboxRelay>;
  fanout: EventFanout;
  delivery: WebhookDelivery;
  /** Invoice emails; none without SMTP_URL (docs/emails.md). */
  mail: MailDelivery | null;
  housekeeping: DispatcherHousekeeping;
  /** Start order; the role stops them in reverse (sending stops last, after nothing new arrives). */
  components: Component[];
}

const now = () => new Date();

/** The dispatcher role's parts: outbox → EVENTS relay, EVENTS → deliveries fan-out, webhook and email delivery, housekeeping. */
export function createDispatcherParts(infra: Infra, opts: DispatcherOptions = {}): DispatcherParts {
  const delivery = new WebhookDelivery(infra, {
    ...opts.delivery,
    // A 410 may end an account's meter.usage.recorded subscription.
    onWebhooksDisabled: async (accounts) => {
      for (const a of [...accounts, DEPLOYMENT_SUBSCRIBER]) await syncUsageSubscriber(infra, a);
    },
  });
  const clock = opts.delivery?.clock ? { clock: opts.delivery.clock } : {};
  // Emails are due by the delivery clock too (tests move one clock), unless they are given their own.
  const mailClock = opts.mail?.clock ?? opts.delivery?.clock ?? now;
  const mail = infra.config.SMTP_URL ? new MailDelivery(infra, { ...opts.mail, clock: mailClock }) : null;
  const fanout = new EventFanout(infra, {
    ...clock,
    ...opts.fanout,
    onRecorded: () => delivery.wake(),
    handoff: delivery,
    // Emails are recorded with the webhook deliveries, before the event is acked: none lost, none doubled.
    ...(mail && {
      alsoRecord: async (events) => {
        if ((await recordEmails(infra.pg, events, mailClock())) > 0) mail.wake();
      },
    }),
  });
  const relay = createOutboxRelay(infra, opts.relay);
  const housekeeping = new DispatcherHousekeeping(infra, opts.housekeepingIntervalMs);
  const sending = mail ? [delivery, mail] : [delivery];
  return { relay, fanout, delivery, mail, housekeeping, components: [...sending, fanout, relay, housekeeping] };
}
