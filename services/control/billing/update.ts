import type { RouteDef } from '../../../shared/http/route.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { BillingInfoSchema, UpdateBillingBody, type BillingAddress } from './schemas.js';
import { getBillingInfo, putBillingAddress } from './store.js';

const validator = bodyValidator<{ billing_address: BillingAddress }>(UpdateBillingBody);

export function parseUpdateBilling(body: unknown): BillingAddress {
  const { billing_address: a } = validator.parse(body);
  // minLength counts characters; an address line of only spaces is still empty.
  const blank = (['line1', 'city', 'state', 'zip'] as const).filter((k) => a[k].trim() === '');
  if (blank.length) throw new ValidationError(blank.map((k) => ({ field: `billing_address.${k}`, message: 'must not be blank' })));
  return a;
}

export function updateBillingRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'PATCH',
    path: '/v1/billing',
    auth: 'write',
    handler: async (ctx) => {
      const address = parseUpdateBilling(ctx.body);
      const accountId = ctx.principal!.accountId;
      if (!(await putBillingAddress(deps.pg, accountId, address))) throw new NotFoundError('The account no longer exists.');
      const info = await getBillingInfo(deps.pg, accountId);
      if (!info) throw new NotFoundError('The account no longer exists.');
      return { status: 200, body: info };
    },
    doc: {
      summary: 'Replace the billing address (line1, city, state, zip: each 1–200 characters, all required)',
      tags: ['billing'],
      requestBody: UpdateBillingBody,
      responses: { '200': { description: 'the updated billing information', schema: BillingInfoSchema } },
    },
  };
}
