import type { RouteDef } from '../../../shared/http/route.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { CreateSubscriptionBody, SubscriptionSchema, toSubscription } from './schemas.js';
import { createSubscription } from './store.js';

const body = bodyValidator<CreateSubscriptionBody>(CreateSubscriptionBody);

/** POST /v1/subscriptions — 201 + Location; emits subscription.updated in the same transaction. */
export function createSubscriptionRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/subscriptions',
    auth: 'write',
    handler: async (ctx) => {
      const input = body.parse(ctx.body);
      const sub = await withTransaction(deps.pg, (c) => createSubscription(c, ctx.principal!.accountId, input.items));
      return { status: 201, body: toSubscription(sub), headers: { Location: `/v1/subscriptions/${sub.row.id}` } };
    },
    doc: {
      summary: 'Subscribe the account to products',
      tags: ['subscriptions'],
      requestBody: CreateSubscriptionBody,
      responses: { '201': { description: 'The created subscription (Location names it)', schema: SubscriptionSchema } },
    },
  };
}
