import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { CreatePaymentMethodLinkBody, PaymentMethodLinkSchema } from '../../../shared/api/hosted-pages.js';
import { mintCardLink } from '../../domain/hosted-pages/links.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { parsePaymentMethodLink } from './input.js';

/**
 * POST /v1/billing/payment-method-links — a link to the hosted "update payment method" page: an operator's for any
 * customer of the deployment (`customer_id`), any other token's for itself. The URL is in this answer only (only its
 * hash is stored); it works for 7 days, and a newer link of the same customer revokes it.
 */
export function paymentMethodLinkRoute(deps: ApiDeps): RouteDef<CreatePaymentMethodLinkBody> {
  return {
    method: 'POST',
    path: '/v1/billing/payment-method-links',
    auth: 'write',
    input: parsePaymentMethodLink,
    handler: async (ctx, body) => {
      const accountId = await accountActedFor(deps.pg, ctx.principal!, body.customer_id);
      const link = await mintCardLink(deps.pg, deps.config.PUBLIC_BASE_URL, accountId, new Date());
      return reply.json(201, { id: link.id, url: link.url, expires_at: link.expires_at.toISOString() });
    },
    doc: {
      summary:
        'A link to the hosted "update payment method" page (shown once; 7 days; a newer one revokes it): an operator’s for any customer, any other token’s for itself',
      tags: ['hosted pages'],
      requestBody: CreatePaymentMethodLinkBody,
      responses: {
        '201': { description: 'the link', schema: PaymentMethodLinkSchema },
        '403': problemResponse('a customer naming another customer'),
        '422': problemResponse('an operator naming no customer of the deployment'),
      },
    },
  };
}
