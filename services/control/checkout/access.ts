import type { ApiDeps } from '../../../shared/http/route.js';
import type { RequestContext } from '../../../shared/http/context.js';
import { NotFoundError } from '../../../shared/errors.js';
import { findCheckoutSession } from '../../domain/checkout/store.js';
import { checkoutTokenOpens } from '../../domain/checkout/links.js';
import type { CheckoutSessionRow } from '../../domain/checkout/types.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';

/**
 * The session a checkout link opens, or null — a wrong token is told exactly like an unknown session (404), so a
 * link cannot be guessed from a session id.
 */
export async function openCheckout(deps: ApiDeps, ctx: RequestContext): Promise<CheckoutSessionRow | null> {
  const id = ctx.params.session_id!;
  if (!checkoutTokenOpens(hostedKey(deps.config.SECRET_KEY), id, ctx.params.token!)) return null;
  return findCheckoutSession(deps.pg, id);
}

/** For the JSON operations behind the page: a link that does not work is 404, nothing done. */
export function checkoutOrNotFound(s: CheckoutSessionRow | null): CheckoutSessionRow {
  if (!s) throw new NotFoundError('This checkout link does not work.');
  return s;
}
