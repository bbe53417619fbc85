import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { createCustomers, customerToken, deploymentMeter } from '../fixtures/operator.js';
import { Decimal } from '../../shared/money/decimal.js';

/**
 * Operator billing (docs/operator-mode.md): the operator subscribes its customers to a product priced on a
 * deployment meter (`POST /v1/subscriptions {customer_id}`), and the billing close prices each customer's usage
 * of that meter exactly — its own records only, though every customer's records are rows of the same meter and
 * two customers send the same record ids. The operator reads each customer's subscriptions, invoices and credits
 * with `?customer_id=`; a customer reads them in its own lists and can name no other customer.
 */
t.test('operator billing: each customer invoiced for its own usage of a deployment meter', async (t) => {
  const w = await billingWorld(t);
  const ADMIN = w.operator.tokens.admin;
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(w.api.url, token, method, path, body);
  const [a, b, idle] = await createCustomers(w.api.url, ADMIN, 3, 'billed');
  const bToken = await customerToken(w.api.infra, b!.accountId);
  const aRead = await customerToken(w.api.infra, a!.accountId, ['read']);
  const meter = await deploymentMeter(w.api.url, ADMIN, { name: 'api-calls', aggregation: 'sum' });
  await waitForIngressMeter(w.api.url, ADMIN, meter.id);
  const product = await w.product('API calls', 0.07, 'USD', 'metered');

  // The current month's usage: the same ids from different customers are different records.
  const now = new Date();
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const ts = new Date(Math.max(now.getTime() - 60_000, monthStart + 1_000)).toISOString();
  const sent = await call(ADMIN, 'POST', `/v1/meters/${meter.id}/usage`, [
    { id: 'call-1', value: 1.5, timestamp: ts, customer: a!.externalId },
    { id: 'call-2', value: 2.25, timestamp: ts, customer_id: a!.id },
    { id: 'call-1', value: 1.5, timestamp: ts, customer: a!.externalId }, // a retry: counted once
    { id: 'call-1', value: 10, timestamp: ts, customer: b!.externalId },
    { id: 'call-3', value: 0.333, timestamp: ts, customer: b!.externalId },
    { id: 'call-1', value: 1000, timestamp: ts, customer: idle!.externalId },
  ]);
  t.equal(sent.body.accepted, 6, JSON.stringify(sent.body));
  const own = await call(bToken, 'POST', `/v1/meters/${meter.id}/usage`, { id: 'call-4', value: 1, timestamp: ts });
  t.equal(own.status, 202, 'the customer’s own token records its own usage of the meter');
  const want = new Map([
    [a!.externalId, 3.75],
    [b!.externalId, 11.333],
    [idle!.externalId, 1000],
  ]);
  const grouped = async () =>
    (await call(ADMIN, 'GET', `/v1/meters/${meter.id}/usage?window=none&group_by=customer`)).body.groups as {
      dimensions: { customer: string };
      value: number;
    }[];
  await waitUntil(
    async () => (await grouped()).filter((g) => want.get(g.dimensions.customer) === g.value).length === 3,
    'ClickHouse to hold every customer’s records',
  );

  await t.test('POST /v1/subscriptions {customer_id}: the operator subscribes its customers', async (t) => {
    for (const c of [a!, b!]) {
      const s = await call(ADMIN, 'POST', '/v1/subscriptions', {
        customer_id: c.id,
        items: [{ product_id: product, meter_id: meter.id }],
      });
      t.equal(s.status, 201, JSON.stringify(s.body));
    }
    const listed = await call(ADMIN, 'GET', `/v1/subscriptions?customer_id=${a!.id}`);
    t.equal(listed.body.pagination.total, 1, 'the operator lists one customer’s subscriptions');
    t.equal((await call(ADMIN, 'GET', '/v1/subscriptions')).body.pagination.total, 0, 'and has none of its own');
    t.same(
      (await call(aRead, 'GET', '/v1/subscriptions')).body.data.map((s: { id: string }) => s.id),
      listed.body.data.map((s: { id: string }) => s.id),
      'the customer sees it in its own list',
    );
    t.equal((await call(aRead, 'GET', `/v1/subscriptions?customer_id=${a!.id}`)).status, 200, 'naming itself: fine');
    const other = await call(aRead, 'GET', `/v1/subscriptions?customer_id=${b!.id}`);
    t.equal(other.status, 403, 'naming another customer: 403');
    t.equal(other.body.code, 'insufficient_scope');
    const unknown = await call(ADMIN, 'POST', '/v1/subscriptions', {
      customer_id: 'cus_nosuchcustomer000000000',
      items: [{ product_id: product, meter_id: meter.id }],
    });
    t.equal(unknown.status, 422);
    t.same(unknown.body.errors, [{ field: 'customer_id', message: 'no such customer' }]);
  });

  await t.test('the close prices each customer’s own records exactly, once per period', async (t) => {
    const closeAt = new Date(nextMonth + (w.config.BILLING_GRACE_SECONDS + 60) * 1000).toISOString();
    const run = await w.run(closeAt);
    t.equal(run.code, 0, run.stderr.slice(-2000));
    const invoicesOf = async (id: string) =>
      (await call(ADMIN, 'GET', `/v1/billing/invoices?customer_id=${id}`)).body.data as {
        customer_id: string;
        amount: number;
        currency: string;
        period_start: string;
        lines: { meter_id: string; quantity: number; unit_price: number; amount: number }[];
      }[];
    for (const [c, quantity] of [
      [a!, '3.75'],
      [b!, '11.333'],
    ] as const) {
      const amount = new Decimal(quantity).mul('0.07').toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toNumber();
      const invoices = await invoicesOf(c.id);
      t.equal(invoices.length, 1, `${c.externalId}: one invoice`);
      t.match(invoices[0], {
        customer_id: c.id,
        currency: 'USD',
        amount,
        period_start: new Date(monthStart).toISOString().slice(0, 10),
        lines: [{ meter_id: meter.id, quantity: Number(quantity), unit_price: 0.07, amount }],
      });
      t.equal(invoices[0]!.lines.length, 1, `${c.externalId}: ${quantity} units × 0.07 = ${amount}`);
    }
    t.same(await invoicesOf(idle!.id), [], 'a customer without a subscription: no invoice, whatever its usage');
    t.same(
      (await call(aRead, 'GET', '/v1/billing/invoices')).body.data.map((i: { amount: number }) => i.amount),
      [0.26],
      'the customer sees its invoice in its own list',
    );
    t.equal((await call(aRead, 'GET', `/v1/billing/invoices?customer_id=${b!.id}`)).status, 403);
    const again = await w.run(closeAt);
    t.equal(again.code, 0);
    t.equal((await invoicesOf(a!.id)).length, 1, 'a second run makes no second invoice');
  });

  await t.test('credits: granted to a customer by customer_id, listed with ?customer_id=', async (t) => {
    const grant = (body: Record<string, unknown>) =>
      call(ADMIN, 'POST', '/v1/billing/credits', { amount: 5, currency: 'USD', description: 'Welcome', ...body });
    const made = await grant({ customer_id: b!.id });
    t.equal(made.status, 201, JSON.stringify(made.body));
    t.equal(made.body.account_id, b!.accountId);
    for (const [body, field] of [
      [{ customer_id: 'cus_nosuchcustomer000000000' }, 'customer_id'],
      [{ customer_id: b!.id, account_id: b!.accountId }, 'account_id'],
      [{}, 'account_id'],
    ] as const) {
      const r = await grant(body);
      t.equal(r.status, 422, JSON.stringify(body));
      t.same(
        r.body.errors.map((e: { field: string }) => e.field),
        [field],
      );
    }
    const listed = await call(ADMIN, 'GET', `/v1/billing/credits?customer_id=${b!.id}`);
    t.same(
      listed.body.data.map((g: { id: string }) => g.id),
      [made.body.id],
    );
    t.same(listed.body.balance, [{ currency: 'USD', amount: 5 }]);
    t.same((await call(bToken, 'GET', '/v1/billing/credits')).body.balance, listed.body.balance, 'the customer: same');
    t.equal((await call(ADMIN, 'GET', `/v1/billing/credits?customer_id=${a!.id}`)).body.pagination.total, 0);
    t.equal((await call(aRead, 'GET', `/v1/billing/credits?customer_id=${b!.id}`)).status, 403);
  });
});
