import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { UpdateBillingBody } from '../../../shared/api/billing-info.js';
import type { BillingAddress } from '../../domain/billing-info/types.js';

/** Billing information's one validation place. */
const updateBody = bodyValidator<{ billing_address: BillingAddress }>(UpdateBillingBody);

export function parseBillingAddress(ctx: RequestContext): BillingAddress {
  const { billing_address: a } = updateBody.parse(ctx.body);
  // minLength counts characters; an address line of only spaces is still empty.
  const blank = (['line1', 'city', 'state', 'zip'] as const).filter((k) => a[k].trim() === '');
  if (blank.length)
    throw new ValidationError(blank.map((k) => ({ field: `billing_address.${k}`, message: 'must not be blank' })));
  return a;
}
