import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { ForbiddenError, NotFoundError } from '../../../shared/errors.js';
import { readPortalSettings } from '../../domain/portal-settings/settings.js';
import { asCustomer, type ApiRoutes } from './api-call.js';
import { portalPost } from './route.js';

/** What each subscription button asks of PATCH /v1/subscriptions/:id (the API's rules decide if it may). */
const CHANGES: Record<string, object> = {
  cancel: { cancel_at_period_end: true },
  keep: { cancel_at_period_end: false },
  pause: { pause_collection: { behavior: 'void' } },
  resume: { pause_collection: null },
};

/**
 * POST /portal/subscriptions/:subscription_id/:action — cancel at the period's end and undo it, pause and resume
 * invoicing: the customer's own PATCH /v1/subscriptions/:id, so portal settings (customer_can_cancel on a
 * subscription the operator made, self_serve_subscriptions on its own) allow or refuse it, and another customer's
 * subscription is 404. `plan` (portal setting portal_change_plan): the customer's own POST …/plan_change.
 * `promotion`: a promotion code redeemed through the customer's own PATCH (its coupon from this period on).
 */
export function subscriptionActionRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalPost(
    deps,
    '/portal/subscriptions/:subscription_id/:action',
    'cancel at period end, undo it, pause or resume a subscription, change its plan',
    async (visit, ctx, form) => {
      const name = ctx.params.action!;
      const subscription_id = ctx.params.subscription_id!;
      if (name === 'plan') {
        if (!(await readPortalSettings(deps.pg)).settings.portal_change_plan)
          throw new ForbiddenError('Plans are changed by the operator on this deployment.', 'portal_setting_off');
        const sub = await asCustomer(visit, api('POST /v1/subscriptions/:subscription_id/plan_change'), {
          params: { subscription_id },
          body: { plan_id: form.plan_id ?? '' },
        });
        return `/portal?done=${sub.scheduled_plan_change ? 'scheduled' : 'upgraded'}`;
      }
      if (name === 'promotion') {
        // The API's own redemption (counted once, refused precisely: docs/checkout.md "Promotion codes").
        await asCustomer(visit, api('PATCH /v1/subscriptions/:subscription_id'), {
          params: { subscription_id },
          body: { promotion_code: (form.code ?? '').trim() },
        });
        return '/portal?done=promotion';
      }
      const change = CHANGES[name];
      if (!change) throw new NotFoundError(`The portal has no action ${name}.`);
      await asCustomer(visit, api('PATCH /v1/subscriptions/:subscription_id'), {
        params: { subscription_id },
        body: change,
      });
      return `/portal?done=${name}`;
    },
  );
}
