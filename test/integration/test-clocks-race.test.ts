import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { callJson } from '../fixtures/matrix.js';
import { createCustomers } from '../fixtures/operator.js';

/**
 * Issue 49 item 5: attaching a customer to a test clock and creating its first subscription at once, 100 times on
 * real Postgres. One lock order (the customer's account row, lockAccountClock) serialises them, so a customer on a
 * clock never holds a subscription that began at real time: either the subscription came first (the attachment is
 * refused 409 customer_has_subscriptions) or the attachment did (the subscription starts at the clock's time).
 * Before: both succeeded with a real-time subscription in 4 of 12 trials.
 */
t.test(
  'attach to a test clock vs subscribe, at once: never a clocked customer with a real-time subscription',
  async (t) => {
    const w = await billingWorld(t);
    const ADMIN = w.operator.tokens.admin;
    const TRIALS = 100;
    const plan = await w.product('Race plan', 10, 'USD');
    const frozen = '2026-03-01T00:00:00.000Z';
    const clock = (await w.made(ADMIN, 'POST', '/v1/test_clocks', { frozen_time: frozen })).id;
    const customers = await createCustomers(w.api.url, ADMIN, TRIALS, 'race');
    const outcomes = { subscribedFirst: 0, attachedFirst: 0 };
    const wrong: string[] = [];
    for (const c of customers) {
      const [attach, subscribe] = await Promise.all([
        callJson(w.api.url, ADMIN, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: c.id }),
        callJson(w.api.url, ADMIN, 'POST', '/v1/subscriptions', { customer_id: c.id, items: [{ product_id: plan }] }),
      ]);
      if (subscribe.status !== 201) wrong.push(`${c.externalId}: subscribe ${subscribe.status}`);
      else if (attach.status === 409 && attach.body.code === 'customer_has_subscriptions') {
        if (subscribe.body.current_period_start === frozen) wrong.push(`${c.externalId}: refused yet at clock time`);
        else outcomes.subscribedFirst++;
      } else if (attach.status === 200 || attach.status === 201) {
        if (subscribe.body.current_period_start !== frozen)
          wrong.push(
            `${c.externalId}: both succeeded, subscription at real time ${subscribe.body.current_period_start}`,
          );
        else outcomes.attachedFirst++;
      } else wrong.push(`${c.externalId}: attach ${attach.status} ${JSON.stringify(attach.body)}`);
    }
    t.comment(
      `${TRIALS} trials: ${outcomes.subscribedFirst} subscribed first, ${outcomes.attachedFirst} attached first`,
    );
    t.same(wrong, [], 'every trial serialised');
    t.equal(outcomes.subscribedFirst + outcomes.attachedFirst, TRIALS);
    // What Postgres holds agrees: no clocked customer has a subscription that started before the clock's time.
    const mixed = await w.api.infra.pg.query(
      `SELECT a.id FROM accounts a JOIN subscriptions s ON s.account_id = a.id
      WHERE a.test_clock_id = $1 AND s.created_at <> $2::timestamptz`,
      [clock, frozen],
    );
    t.equal(mixed.rowCount, 0);
  },
);
