import type { RouteDef } from '../../../shared/http/route.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { ValidationError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { SubscriptionSchema, UpdateSubscriptionBody, toSubscription } from './schemas.js';
import { changeSubscription } from './store.js';

const body = bodyValidator<UpdateSubscriptionBody>(UpdateSubscriptionBody);

/** PATCH /v1/subscriptions/:subscription_id — replace items and/or cancel (`{"status": "canceled"}`). */
export function updateSubscriptionRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'PATCH',
    path: '/v1/subscriptions/:subscription_id',
    auth: 'write',
    handler: async (ctx) => {
      const input = body.parse(ctx.body);
      if (input.items === undefined && input.status === undefined) throw new ValidationError([{ field: '', message: 'must contain items or status' }]);
      const { subscription } = await withTransaction(deps.pg, (c) => changeSubscription(c, ctx.principal!.accountId, ctx.params.subscription_id!, input));
      return { status: 200, body: toSubscription(subscription) };
    },
    doc: {
      summary: 'Change a subscription’s items or cancel it',
      tags: ['subscriptions'],
      requestBody: UpdateSubscriptionBody,
      responses: {
        '200': { description: 'The subscription after the change', schema: SubscriptionSchema },
        '409': { description: 'The subscription is canceled (code subscription_canceled)' },
      },
    },
  };
}
