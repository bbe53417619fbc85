import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateSubscriptionBody, SubscriptionSchema } from '../../../shared/api/subscriptions.js';
import { toSubscription } from './representation.js';
import { parseNewSubscription, type NewSubscription } from './input.js';
import { createSubscription } from '../../domain/subscriptions/store.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';

/** POST /v1/subscriptions — 201 + Location; emits subscription.updated in the same transaction. */
export function createSubscriptionRoute(deps: ApiDeps): RouteDef<NewSubscription> {
  return {
    method: 'POST',
    path: '/v1/subscriptions',
    auth: 'write',
    input: parseNewSubscription,
    handler: async (ctx, input) => {
      const accountId = await accountActedFor(deps.pg, ctx.principal!, input.customerId);
      const { sub, now } = await withTransaction(deps.pg, async (c) => {
        const { now } = await accountTime(c, accountId);
        return {
          sub: await createSubscription(c, accountId, input.items, now, input.billingThreshold, input.terms),
          now,
        };
      });
      return reply.created(toSubscription(sub, now), `/v1/subscriptions/${sub.row.id}`);
    },
    doc: {
      summary: 'Subscribe the account (an operator: any customer, customer_id) to products',
      tags: ['subscriptions'],
      requestBody: CreateSubscriptionBody,
      responses: { '201': { description: 'The created subscription (Location names it)', schema: SubscriptionSchema } },
    },
  };
}
