import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { AdvanceTestClockBody, AttachCustomerBody, TestClockSchema } from '../../../shared/api/test-clocks.js';
import type { BillingDeps } from '../../domain/billing/deps.js';
import { advanceTestClock } from '../../domain/billing/clock-advance.js';
import { attachCustomer } from '../../domain/test-clocks/store.js';
import { toTestClock } from './representation.js';
import { parseAdvance, parseAttachCustomer } from './input.js';

/**
 * POST /v1/test_clocks/:clock_id/advance (admin) — moves the clock forward, running the billing engine for its
 * customers at every instant something falls due on the way (services/domain/billing/clock-advance.ts); answers
 * once done, with the clock at its new time.
 */
export function advanceTestClockRoute(deps: ApiDeps, billing: () => BillingDeps): RouteDef<Date> {
  return {
    method: 'POST',
    path: '/v1/test_clocks/:clock_id/advance',
    auth: 'admin',
    input: parseAdvance,
    handler: async (ctx, target) =>
      reply.ok(toTestClock(await advanceTestClock(billing(), ctx.principal!.accountId, ctx.params.clock_id!, target))),
    doc: {
      summary:
        'Advance a test clock: period closes, charges and dunning retries of its customers run in order, at their times',
      tags: ['test clocks'],
      requestBody: AdvanceTestClockBody,
      responses: {
        '200': { description: 'The clock at its new frozen_time', schema: TestClockSchema },
        '422': { description: 'frozen_time is not after the clock’s (a clock only moves forward)' },
      },
    },
  };
}

/** POST /v1/test_clocks/:clock_id/customers (admin) — puts a customer without subscriptions on the clock. */
export function attachCustomerRoute(deps: ApiDeps): RouteDef<string> {
  return {
    method: 'POST',
    path: '/v1/test_clocks/:clock_id/customers',
    auth: 'admin',
    input: parseAttachCustomer,
    handler: async (ctx, customerId) => {
      const clock = await withTransaction(deps.pg, (c) =>
        attachCustomer(c, ctx.principal!.accountId, ctx.params.clock_id!, customerId),
      );
      return reply.ok(toTestClock(clock));
    },
    doc: {
      summary: 'Put a customer on a test clock (from then on it lives at the clock’s time)',
      tags: ['test clocks'],
      requestBody: AttachCustomerBody,
      responses: {
        '200': { description: 'The clock, with the customer in customer_ids', schema: TestClockSchema },
        '409': {
          description:
            'The customer is on another clock (customer_on_test_clock) or already has subscriptions (customer_has_subscriptions)',
        },
      },
    },
  };
}
