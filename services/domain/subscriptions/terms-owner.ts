import { ForbiddenError, type FieldError } from '../../../shared/errors.js';
import type { PortalSettings } from '../portal-settings/settings.js';
import type { SubscriptionRow } from './types.js';

/**
 * Commercial terms belong to the operator (issue 49, docs/operator-mode.md "Who changes a subscription's terms"):
 * the one rule of who may create a subscription and change what it bills. The operator (an admin token) always
 * may. A customer (any other token) may subscribe itself and change its own subscriptions while self-serve is on
 * (portal setting `self_serve_subscriptions`, default on); on a subscription the operator made it changes only
 * what the portal settings allow (default: nothing). Coupons are the operator's alone (coupons/scope.ts).
 */
export interface TermsChange {
  items?: unknown;
  status?: 'canceled';
  cancelAtPeriodEnd?: boolean;
  pauseCollection?: boolean;
  billingThreshold?: string | null;
}

const selfServeOff = () =>
  new ForbiddenError(
    'Self-serve subscriptions are turned off on this deployment: the operator creates and changes subscriptions.',
    'self_serve_disabled',
  );

/** A customer subscribing itself: refused (403 self_serve_disabled) when the operator turned self-serve off. */
export function checkCustomerMayCreate(isOperator: boolean, settings: PortalSettings): void {
  if (!isOperator && !settings.self_serve_subscriptions) throw selfServeOff();
}

/**
 * A change of `sub` by a customer: on the operator's subscription each field the portal settings don't give the
 * customer is named in one 403 `operator_terms`; on its own, refused only with self-serve off.
 */
export function checkCustomerMayChange(
  isOperator: boolean,
  sub: Pick<SubscriptionRow, 'id' | 'operator_managed'>,
  change: TermsChange,
  settings: PortalSettings,
): void {
  if (isOperator) return;
  if (!sub.operator_managed) {
    if (!settings.self_serve_subscriptions) throw selfServeOff();
    return;
  }
  const refused: FieldError[] = [];
  const byOperator = 'is set by the operator on this subscription';
  if (change.items !== undefined && !settings.customer_can_change_items)
    refused.push({ field: 'items', message: byOperator });
  if (change.status !== undefined && !settings.customer_can_cancel)
    refused.push({ field: 'status', message: byOperator });
  // Scheduling a cancellation, or undoing it, is canceling: the same setting.
  if (change.cancelAtPeriodEnd !== undefined && !settings.customer_can_cancel)
    refused.push({ field: 'cancel_at_period_end', message: byOperator });
  // Pausing stops what the operator collects, as canceling does: the same setting.
  if (change.pauseCollection !== undefined && !settings.customer_can_cancel)
    refused.push({ field: 'pause_collection', message: byOperator });
  if (change.billingThreshold !== undefined && !settings.customer_can_change_threshold)
    refused.push({ field: 'billing_threshold', message: byOperator });
  if (refused.length)
    throw new ForbiddenError(
      `Subscription ${sub.id} was made by the operator: ${refused.map((e) => e.field).join(', ')} can only be changed by the operator.`,
      'operator_terms',
      refused,
    );
}
