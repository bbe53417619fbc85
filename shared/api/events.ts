import Type from 'typebox';
import type { JsonDecimal } from '../money/json.js';
import { PaginationQuery, listOf, type PageRequest } from '../http/pagination.js';
import { CREDIT_NOTE_TYPES, EVENT_TYPES, INVOICE_STATUSES, type EventType } from '../vocabulary.js';
import { SubscriptionItemSchema, SubscriptionStatus } from './subscriptions.js';

export const ListEventsQuery = Type.Object(
  { ...PaginationQuery, type: Type.Optional(Type.Enum([...EVENT_TYPES], { description: 'only events of this type' })) },
  { additionalProperties: false },
);
export type ListEventsQuery = Type.Static<typeof ListEventsQuery>;

/** A validated GET /v1/events query. */
export interface EventListRequest extends PageRequest {
  type?: EventType;
}

/*
 * The event catalogue: what each event type's `data` holds, one typebox schema per type. The emit sites are checked
 * against it by the compiler (services/domain/events/outbox-store.ts NewEvent), the OpenAPI document's `data` and the
 * payload table of docs/webhooks.md are generated from it (npm run docs). A new event type: its name in EVENT_TYPES
 * (shared/vocabulary.ts), then its entry here — the compiler asks for it.
 */

const Money = (description: string) =>
  Type.Number({ description: `${description}; an exact decimal written as a JSON number` });
const Time = (description: string) => Type.String({ format: 'date-time', description });
const Nullable = <T extends Type.TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

const Invoice = {
  invoice_id: Type.String({ description: 'inv_…' }),
  amount: Money('the invoice’s total'),
  currency: Type.String({ description: 'ISO 4217' }),
};
/** Where the customer sees and pays the invoice (docs/payments.md "Hosted pages"); absent when hosted pages are off. */
const HostedLink = {
  hosted_invoice_url: Type.Optional(Nullable(Type.String(), 'the invoice’s hosted page (pay, PDF); null once revoked')),
};
const InvoiceStatus = Type.Enum([...INVOICE_STATUSES]);
/** A status change of an invoice: the status it now has and, like Stripe's `previous_attributes`, the one it had. */
const invoiceStatusChange = <S extends (typeof INVOICE_STATUSES)[number]>(now: S) => ({
  status: Type.Literal(now, { description: 'the invoice’s status now' }),
  previous_attributes: Type.Object(
    { status: InvoiceStatus },
    { description: 'what changed, as it was (draft: issued already paid, it was never open)' },
  ),
});
const PaymentAttempt = {
  payment_method_id: Nullable(Type.String(), 'the card charged (pm_…)'),
  attempt_count: Type.Integer({ description: 'the attempt’s number, 1 for the first' }),
};
const Dispute = {
  dispute_id: Type.String({ description: 'the processor’s dispute id' }),
  reason: Type.String({ description: 'the processor’s reason' }),
  status: Type.String({ description: 'the dispute’s status (closed: won or lost)' }),
};
/** What `subscription.updated` carries of the subscription, as it now is; `previous_attributes` what changed. */
const SubscriptionState = {
  status: SubscriptionStatus,
  items: Type.Array(SubscriptionItemSchema),
  plan_id: Nullable(Type.String(), 'the plan its items came from (plan_…), null when none'),
  plan_version: Nullable(Type.Integer(), 'that plan’s version: after a plan migration, the version it moved to'),
  billing_threshold: Nullable(Type.Object({ amount: Money('the threshold') }), 'progressive billing, or null'),
  coupon_id: Nullable(Type.String(), 'the coupon discounting it now (coupon_…), or null'),
  cancel_at_period_end: Type.Boolean({ description: 'active and to cancel at its period’s end (billing.md)' }),
  collection_paused: Type.Boolean({ description: 'active with its collection paused (pause_collection, billing.md)' }),
  cancel_at: Nullable(Time('when it is to cancel'), 'when it is to cancel (its period’s end), or null'),
  canceled_at: Nullable(Time('when it was canceled'), 'when it was canceled, or null'),
};
/** `subscription.updated` and `subscription.canceled` alike: the subscription as it now is, and what changed. */
const SubscriptionChange = {
  subscription_id: Type.String({ description: 'sub_…' }),
  ...SubscriptionState,
  previous_attributes: Type.Optional(
    Type.Partial(Type.Object(SubscriptionState), {
      description: 'the fields that changed, as they were; absent when the subscription was created',
    }),
  ),
};

const event = <P extends Type.TProperties>(description: string, properties: P) =>
  Type.Object(properties, { additionalProperties: false, description });

export const EVENT_DATA = {
  'invoice.created': event(
    'the invoice was issued: finalized and numbered (a draft emits nothing until it is finalized)',
    { ...Invoice, ...HostedLink },
  ),
  'invoice.paid': event('the invoice is paid: charged, settled by credit notes, or issued with nothing to charge', {
    ...Invoice,
    ...invoiceStatusChange('paid'),
  }),
  'invoice.voided': event('the invoice was voided', { ...Invoice, ...invoiceStatusChange('void') }),
  'payment.failed': event('a payment attempt failed; the invoice stays open (or becomes uncollectible)', {
    ...Invoice,
    ...PaymentAttempt,
    failure_code: Type.String({ description: 'why (card_declined, insufficient_funds, no_payment_method, …)' }),
  }),
  'invoice.payment_action_required': event(
    'the bank asks the customer to authenticate the charge (3-D Secure, payments.md); the invoice stays open',
    { ...Invoice, ...PaymentAttempt, ...HostedLink },
  ),
  'invoice.disputed': event('a dispute of the invoice’s charge opened at Stripe (payments.md#webhooks)', {
    ...Invoice,
    ...Dispute,
  }),
  'invoice.dispute_closed': event('a dispute of the invoice’s charge closed (won, lost) at Stripe', {
    ...Invoice,
    ...Dispute,
  }),
  'credit_note.created': event('a credit note was issued on an invoice', {
    credit_note_id: Type.String({ description: 'cn_…' }),
    invoice_id: Type.String({ description: 'the invoice it credits (inv_…)' }),
    type: Type.Enum([...CREDIT_NOTE_TYPES]),
    amount: Money('what it takes off the invoice'),
    currency: Type.String(),
    reason: Type.String({ description: 'the reason given' }),
  }),
  'subscription.updated': event(
    'the subscription was created or changed (items, plan version, status, threshold, coupon, scheduled cancellation, paused collection): the subscription as it now is',
    SubscriptionChange,
  ),
  'subscription.canceled': event(
    'the subscription was canceled (at once, or at its period’s end), once, beside that change’s subscription.updated: the same data',
    SubscriptionChange,
  ),
  'subscription.trial_will_end': event(
    'three days before a running subscription’s trial ends (at the first billing run when the trial is shorter), once (billing.md#trials)',
    { subscription_id: Type.String(), trial_end: Time('the end of the trial') },
  ),
  'meter.usage.recorded': event('once per stored usage record (only for accounts with a webhook subscribed to it)', {
    meter_id: Type.String(),
    usage_id: Type.String({ description: 'the record’s id' }),
    value: Money('the recorded value'),
    timestamp: Time('when the usage happened'),
  }),
  'entitlement.exhausted': event(
    'a metered block entitlement reached its limit, once per period (entitlements.md#entitlementexhausted)',
    {
      entitlement_id: Type.String(),
      feature: Type.String(),
      usage: Money('the usage of the period'),
      limit: Money('the limit'),
      period_start: Time('the start of the period'),
    },
  ),
  'alert.triggered': event('once per alert, customer, threshold and billing period (alerts.md)', {
    alert_id: Type.String(),
    metric: Type.String({ description: 'what the alert watches' }),
    meter_id: Nullable(Type.String(), 'the meter, for a usage alert'),
    currency: Nullable(Type.String(), 'the currency, for an amount alert'),
    threshold: Money('the threshold crossed'),
    value: Money('the value that crossed it'),
    period_start: Time('the start of the billing period'),
  }),
  'export.completed': event('once per export written, to the operator (exports.md)', {
    export_id: Type.String(),
    schedule_id: Nullable(Type.String(), 'the schedule that made it (exps_…), or null'),
    kind: Type.String({ description: 'what was exported (usage, invoices, …)' }),
    format: Type.String({ description: 'csv or parquet' }),
    from: Time('the window’s start'),
    to: Time('the window’s end (exclusive)'),
    destination: Type.String({ description: 'local or s3' }),
    object_key: Type.String({ description: 'where the object is' }),
    row_count: Type.Integer(),
    byte_count: Type.Integer(),
    sha256: Type.String({ description: 'of the object’s bytes' }),
  }),
  'checkout.session.completed': event(
    'a customer completed a checkout session (checkout.md): its subscription was made, once, beside that subscription’s subscription.updated',
    {
      checkout_session_id: Type.String({ description: 'cs_…' }),
      subscription_id: Type.String({ description: 'the subscription it made (sub_…)' }),
      plan_id: Type.String({ description: 'the plan subscribed to' }),
      plan_version: Type.Integer({ description: 'the version subscribed to' }),
      coupon_id: Nullable(Type.String(), 'the coupon applied (the session’s, or the promotion code’s), or null'),
      promotion_code_id: Nullable(Type.String(), 'the promotion code the customer redeemed (promo_…), or null'),
      customer_created: Type.Boolean({
        description: 'the customer was created by this checkout (from customer_email)',
      }),
    },
  ),
  'credit.granted': event('once per prepaid credit grant an operator made or a paid top-up bought (credits.md)', {
    grant_id: Type.String({ description: 'cred_…' }),
    amount: Money('the credit granted'),
    currency: Type.String({ description: 'ISO 4217' }),
    expires_at: Nullable(Time('when what remains of it expires'), 'when what remains of it expires; null: never'),
    source: Type.Enum(['operator', 'top_up'], { description: 'what granted it' }),
    invoice_id: Nullable(Type.String(), 'the paid top-up invoice it was bought with (source top_up), or null'),
    top_up_id: Nullable(Type.String(), 'the top-up (ctu_…) it was bought with, or null'),
  }),
  'credit.expired': event('once per grant whose unspent remainder expired (credits.md "Expiry")', {
    grant_id: Type.String({ description: 'cred_…' }),
    amount: Money('what expired: the remainder at the expiry'),
    currency: Type.String({ description: 'ISO 4217' }),
    expired_at: Time('the grant’s expires_at'),
  }),
  'credit.balance_low': event(
    'when a spend takes the balance in a currency below the customer’s low-balance threshold (credits.md)',
    {
      currency: Type.String({ description: 'ISO 4217' }),
      balance: Money('the spendable balance after the spend'),
      threshold: Money('the low-balance threshold it fell below'),
    },
  ),
  'credit.top_up.failed': event('once per top-up whose charge failed: no credit is granted (credits.md)', {
    top_up_id: Type.String({ description: 'ctu_…' }),
    invoice_id: Type.String({ description: 'the top-up invoice, left uncollectible' }),
    amount: Money('the credit it was buying'),
    currency: Type.String({ description: 'ISO 4217' }),
    failure_code: Type.String({ description: 'why (card_declined, no_payment_method, …)' }),
    trigger: Type.Enum(['manual', 'auto_recharge'], { description: 'who asked for it' }),
  }),
} satisfies { [T in EventType]: Type.TObject };

/** What the outbox adds to every event's data: whose event it is (an operator's webhook receives every customer's). */
const CustomerFields = {
  customer_id: Type.String({ description: 'the customer (cus_…)' }),
  external_id: Type.Optional(Type.String({ description: 'the customer’s external id, when it has one' })),
};

/** An event's data as emitted: money as exact decimals (JsonDecimal) or numbers; the outbox adds CustomerFields. */
export type EventData<T extends EventType> = Emitted<Type.Static<(typeof EVENT_DATA)[T]>>;
type Emitted<V> = V extends number
  ? number | JsonDecimal
  : V extends (infer I)[]
    ? Emitted<I>[]
    : V extends object
      ? { [K in keyof V]: Emitted<V[K]> }
      : V;

/** What an event type means (its schema's description). */
export const descriptionOf = (type: EventType): string =>
  (EVENT_DATA[type] as { description?: string }).description ?? '';

/** The delivered payload's shape (docs/design.md §9), one alternative per type. */
const payloadOf = (type: EventType) =>
  Type.Object(
    {
      id: Type.String({ description: 'evt_…; the X-Webhook-Id / webhook-id of its deliveries' }),
      type: Type.Literal(type),
      data: Type.Object(
        { ...EVENT_DATA[type].properties, ...CustomerFields },
        { additionalProperties: false, description: descriptionOf(type) },
      ),
      created_at: Type.String({ format: 'date-time' }),
    },
    { additionalProperties: false },
  );
export const EventSchema = Type.Union(EVENT_TYPES.map(payloadOf), {
  description: 'depends on `type` (docs/webhooks.md, "Receiving webhooks"; the OpenAPI document has each shape)',
});
export const EventListSchema = listOf(EventSchema);
