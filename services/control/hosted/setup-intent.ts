import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ValidationError } from '../../../shared/errors.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { SetupIntentSecretSchema } from '../../../shared/api/hosted-pages.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { chargingFor, openCardPage, openInvoice, orNotFound } from './access.js';

/**
 * POST /hosted/invoices/:invoice_id/:token/setup-intent and /hosted/cards/:token/setup-intent — a SetupIntent for
 * the link's customer, whose client secret Stripe.js confirms with the card typed into Stripe's card element: the
 * card number goes from the browser to Stripe, never through meterline.
 */
export function hostedSetupIntentRoutes(deps: ApiDeps, live: PaymentProcessor): RouteDef[] {
  const route = (path: string, open: typeof openInvoice | typeof openCardPage): RouteDef => ({
    method: 'POST',
    path,
    auth: 'public',
    handler: async (ctx) => {
      const { accountId } = orNotFound(await open(deps, ctx));
      const { processor, inBrowser } = await chargingFor(deps, live, accountId);
      if (!inBrowser || !processor.createSetupIntent)
        throw new ValidationError(
          [{ field: 'card', message: `the ${processor.name} processor takes no card in the browser` }],
          'This deployment takes no new card on its hosted pages.',
          'payment_method_unsupported',
        );
      const { clientSecret } = await processor.createSetupIntent(accountId);
      return reply.ok({ client_secret: clientSecret });
    },
    doc: {
      summary: 'A SetupIntent for the hosted page’s customer (its client secret, for Stripe.js)',
      tags: ['hosted pages'],
      responses: {
        '200': { description: 'the client secret', schema: SetupIntentSecretSchema },
        '404': problemResponse('the link does not work'),
        '422': problemResponse('the processor takes no card in the browser (`payment_method_unsupported`)'),
      },
    },
  });
  return [
    route('/hosted/invoices/:invoice_id/:token/setup-intent', openInvoice),
    route('/hosted/cards/:token/setup-intent', openCardPage),
  ];
}
