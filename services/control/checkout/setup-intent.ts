import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ValidationError } from '../../../shared/errors.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { SetupIntentSecretSchema } from '../../../shared/api/hosted-pages.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import type { CustomerRegistryWriter } from '../../domain/customers/registry-writer.js';
import { checkoutAccount } from '../../domain/checkout/customer.js';
import { chargingFor } from '../hosted/access.js';
import { checkoutOrNotFound, openCheckout } from './access.js';

/**
 * POST /hosted/checkout/:session_id/:token/setup-intent — a SetupIntent for the checkout's customer (created from
 * customer_email the first time, once), whose client secret Stripe.js confirms with the card element (3-D Secure
 * there when the bank asks): the number goes from the browser to Stripe only.
 */
export function checkoutSetupIntentRoute(
  deps: ApiDeps,
  live: PaymentProcessor,
  registry: () => CustomerRegistryWriter,
): RouteDef {
  return {
    method: 'POST',
    path: '/hosted/checkout/:session_id/:token/setup-intent',
    auth: 'public',
    handler: async (ctx) => {
      const s = checkoutOrNotFound(await openCheckout(deps, ctx));
      const accountId = await checkoutAccount(deps.pg, registry(), s.id, new Date());
      const { processor, inBrowser } = await chargingFor(deps, live, accountId);
      if (!inBrowser || !processor.createSetupIntent)
        throw new ValidationError(
          [{ field: 'card', message: `the ${processor.name} processor takes no card in the browser` }],
          'This deployment takes no card on its hosted pages.',
          'payment_method_unsupported',
        );
      const { clientSecret } = await processor.createSetupIntent(accountId);
      return reply.ok({ client_secret: clientSecret });
    },
    doc: {
      summary: 'A SetupIntent for the checkout’s customer (created from customer_email once), for Stripe.js',
      tags: ['checkout'],
      responses: {
        '200': { description: 'the client secret', schema: SetupIntentSecretSchema },
        '404': problemResponse('the link does not work'),
        '409': problemResponse('the session expired (`checkout_session_expired`)'),
        '422': problemResponse('the processor takes no card in the browser (`payment_method_unsupported`)'),
      },
    },
  };
}
