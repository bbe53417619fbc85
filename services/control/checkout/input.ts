import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { CreateCheckoutSessionBody, HostedCheckoutCompleteBody } from '../../../shared/api/checkout.js';

/** Checkout's one validation place: the schemas, then the rules between fields and the redirect URLs' form. */
const createBody = bodyValidator<CreateCheckoutSessionBody>(CreateCheckoutSessionBody);
const completeBody = bodyValidator<HostedCheckoutCompleteBody>(HostedCheckoutCompleteBody);

export const parseCheckoutComplete = (ctx: RequestContext): HostedCheckoutCompleteBody => completeBody.parse(ctx.body);

/** An absolute http(s) URL without credentials: where the page sends the customer. */
function badRedirect(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'must be an http or https URL';
  if (u.username || u.password) return 'must not carry credentials';
  return null;
}

export function parseNewCheckoutSession(ctx: RequestContext): CreateCheckoutSessionBody {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  if ((input.customer_id === undefined) === (input.customer_email === undefined))
    errors.push({ field: 'customer_id', message: 'give exactly one of customer_id or customer_email' });
  if (input.coupon_id !== undefined && input.allow_promotion_codes)
    errors.push({ field: 'allow_promotion_codes', message: 'not with coupon_id: a checkout applies one discount' });
  for (const field of ['success_url', 'cancel_url'] as const) {
    const bad = badRedirect(input[field]);
    if (bad) errors.push({ field, message: bad });
  }
  if (errors.length) throw new ValidationError(errors);
  return input;
}
