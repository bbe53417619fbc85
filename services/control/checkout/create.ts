import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { ValidationError, NotFoundError } from '../../../shared/errors.js';
import { CheckoutSessionSchema, CreateCheckoutSessionBody } from '../../../shared/api/checkout.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { planVersionToSubscribe } from '../../domain/plans/subscribe.js';
import { getCoupon } from '../../domain/coupons/store.js';
import { insertCheckoutSession } from '../../domain/checkout/store.js';
import { checkoutUrl } from '../../domain/checkout/links.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import { parseNewCheckoutSession } from './input.js';
import { toCheckoutSession } from './representation.js';

/** How long a checkout page works (Stripe's default). */
export const CHECKOUT_TTL_MS = 24 * 3_600_000;

/**
 * POST /v1/checkout_sessions — admin: a link to the hosted checkout page for a plan (docs/checkout.md). The plan,
 * the version, the customer and the coupon must exist now (422 naming the field); the subscription is made when the
 * customer completes the page.
 */
export function createCheckoutSessionRoute(deps: ApiDeps): RouteDef<CreateCheckoutSessionBody> {
  const key = hostedKey(deps.config.SECRET_KEY);
  return {
    method: 'POST',
    path: '/v1/checkout_sessions',
    auth: 'admin',
    input: parseNewCheckoutSession,
    handler: async (ctx, body) => {
      const accountId =
        body.customer_id === undefined ? null : await accountActedFor(deps.pg, ctx.principal!, body.customer_id);
      if (body.coupon_id !== undefined)
        await getCoupon(deps.pg, body.coupon_id).catch((e) => {
          throw e instanceof NotFoundError
            ? new ValidationError([{ field: 'coupon_id', message: 'no such coupon' }])
            : e;
        });
      const now = new Date();
      const row = await withTransaction(deps.pg, async (c) => {
        await planVersionToSubscribe(c, body.plan_id, body.plan_version);
        return insertCheckoutSession(c, {
          plan_id: body.plan_id,
          plan_version: body.plan_version ?? null,
          account_id: accountId,
          customer_email: body.customer_email ?? null,
          success_url: body.success_url,
          cancel_url: body.cancel_url,
          trial_days: body.trial_days ?? null,
          coupon_id: body.coupon_id ?? null,
          allow_promotion_codes: body.allow_promotion_codes ?? false,
          expires_at: new Date(now.getTime() + CHECKOUT_TTL_MS),
        });
      });
      const url = checkoutUrl(key, deps.config.PUBLIC_BASE_URL, row.id);
      return reply.created(
        toCheckoutSession(row, url, body.customer_id ?? null, now),
        `/v1/checkout_sessions/${row.id}`,
      );
    },
    doc: {
      summary: 'Create a checkout session: a link to the hosted page where a customer subscribes to a plan',
      tags: ['checkout'],
      requestBody: CreateCheckoutSessionBody,
      responses: {
        '201': { description: 'The session, its url (Location names it)', schema: CheckoutSessionSchema },
        '422': problemResponse('a bad field, or no such plan, version, customer or coupon (naming the field)'),
      },
    },
  };
}
