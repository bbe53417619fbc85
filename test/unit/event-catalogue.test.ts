import t from 'tap';
import { EVENT_DATA, EventSchema } from '../../shared/api/events.js';
import { bodyValidator } from '../../shared/http/validation.js';
import { stringifyJson } from '../../shared/money/json.js';
import { EVENT_TYPES } from '../../shared/vocabulary.js';
import type { NewEvent } from '../../services/domain/events/outbox-store.js';
import { invoiceVoided, issuedEvents, invoicePaid } from '../../services/domain/invoices/events.js';
import { subscriptionUpdated } from '../../services/domain/subscriptions/events.js';
import type { Subscription, SubscriptionRow } from '../../services/domain/subscriptions/types.js';

// The event catalogue (shared/api/events.ts) is what receivers are told: every type has its schema, and what the
// domain's event builders emit is a payload the schema accepts, field for field.

const payload = bodyValidator(EventSchema);
/** An event as the outbox delivers it: its data as JSON (exact decimals as numbers) plus whose it is. */
const delivered = (e: NewEvent) => ({
  id: 'evt_1',
  type: e.type,
  data: { ...JSON.parse(stringifyJson(e.data)), customer_id: 'cus_1' },
  created_at: '2026-11-28T00:00:00.000Z',
});

t.test('every event type has a schema, and the catalogue names no other', async (t) => {
  t.same(Object.keys(EVENT_DATA).sort(), [...EVENT_TYPES].sort());
  for (const type of EVENT_TYPES) {
    const schema = EVENT_DATA[type] as { type?: string; description?: string };
    t.equal(schema.type, 'object', `${type}: an object`);
    t.ok(schema.description, `${type}: says when it is sent`);
  }
});

t.test('a payload is checked against its own type’s data', async (t) => {
  const data = { invoice_id: 'inv_1', amount: 1, currency: 'USD', customer_id: 'cus_1' };
  const at = '2026-11-28T00:00:00.000Z';
  t.ok(payload.check({ id: 'evt_1', type: 'invoice.created', data, created_at: at }), 'invoice.created as documented');
  t.notOk(payload.check({ id: 'evt_1', type: 'invoice.paid', data, created_at: at }), 'invoice.paid wants its status');
  t.notOk(
    payload.check({ id: 'evt_1', type: 'invoice.created', data: { ...data, extra: 1 }, created_at: at }),
    'no undocumented field',
  );
});

const invoice = { id: 'inv_1', account_id: 'acct_1', amount: '12.345', currency: 'USD' };

t.test('invoice events: the status now and the one it had', async (t) => {
  const [created, paid] = issuedEvents(invoice, 'paid');
  const voided = invoiceVoided(invoice, 'open');
  for (const e of [created!, paid!, voided, invoicePaid(invoice, 'uncollectible')])
    t.ok(payload.check(delivered(e)), `${e.type} matches its schema`, { errors: payload.check.errors });
  t.same(delivered(paid!).data, {
    invoice_id: 'inv_1',
    amount: 12.345,
    currency: 'USD',
    status: 'paid',
    previous_attributes: { status: 'draft' },
    customer_id: 'cus_1',
  });
  t.same(
    issuedEvents(invoice, 'open').map((e) => e.type),
    ['invoice.created'],
    'an open invoice: created only',
  );
  t.same(voided.data.previous_attributes, { status: 'open' });
});

t.test('subscription.updated: the subscription as it is and what changed', async (t) => {
  const row = {
    id: 'sub_1',
    account_id: 'acct_1',
    status: 'active',
    plan_id: 'plan_1',
    plan_version: 1,
    billing_threshold: null,
  } as unknown as SubscriptionRow;
  const item = { product_id: 'prod_1', meter_id: null, minimum_amount: null, group_by: [], quantity: 1 };
  const v1: Subscription = { row, items: [item] };
  const v2: Subscription = { row: { ...row, plan_version: 2 }, items: [{ ...item, quantity: 3 }] };
  const created = subscriptionUpdated({ subscription: v1, couponId: null });
  t.ok(payload.check(delivered(created)), 'at creation', { errors: payload.check.errors });
  t.notOk('previous_attributes' in created.data, 'nothing previous at creation');
  const migrated = subscriptionUpdated(
    { subscription: v2, couponId: 'coupon_1' },
    { subscription: v1, couponId: null },
  );
  t.ok(payload.check(delivered(migrated)), 'after a change', { errors: payload.check.errors });
  t.match(delivered(migrated).data, { plan_id: 'plan_1', plan_version: 2, coupon_id: 'coupon_1' });
  t.same(
    delivered(migrated).data.previous_attributes,
    { items: [{ product_id: 'prod_1', meter_id: null }], plan_version: 1, coupon_id: null },
    'only the fields that changed, as they were',
  );
});
