import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { CreateCreditTopUpBody, CreditTopUpSchema } from '../../../shared/api/credit-top-ups.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { createTopUp } from '../../domain/billing/top-ups.js';
import { defaultTopUpCurrency } from '../../domain/credits/top-ups-store.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { requireMayBuyCredit } from '../../domain/credits/may-buy.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { topUpDeps } from './deps.js';
import { checkAmountScale, parseTopUp, type TopUpInput } from './input.js';
import { toCreditTopUp } from './representation.js';

/**
 * POST /v1/credit_top_ups — buy prepaid credit: an operator (admin) for any customer; a customer for itself when
 * the operator's portal_settings.customer_can_buy_credit allows it. The top-up invoice is charged now to the default
 * payment method; the credit is granted once it is paid (services/domain/billing/top-ups.ts).
 */
export function createCreditTopUpRoute(deps: ApiDeps, processor: PaymentProcessor): RouteDef<TopUpInput> {
  return {
    method: 'POST',
    path: '/v1/credit_top_ups',
    auth: 'write',
    input: parseTopUp,
    handler: async (ctx, input) => {
      const principal = ctx.principal!;
      const accountId = await accountActedFor(deps.pg, principal, input.customerId);
      await requireMayBuyCredit(deps.pg, principal);
      const currency = input.currency ?? (await defaultTopUpCurrency(deps.pg, accountId));
      checkAmountScale(input.amount, currency);
      const { now, clockId } = await accountTime(deps.pg, accountId);
      const topUp = await createTopUp(
        topUpDeps(deps, processor, clockId),
        { accountId, amount: input.amount, currency, idempotencyKey: ctx.headers['idempotency-key'] },
        now,
      );
      return reply.created(toCreditTopUp(topUp), `/v1/credit_top_ups/${topUp.id}`);
    },
    doc: {
      summary: 'Buy prepaid credit: a top-up invoice charged now, the credit granted once it is paid',
      tags: ['billing'],
      requestBody: CreateCreditTopUpBody,
      responses: {
        '201': {
          description:
            'The top-up: paid (credit granted), failed (charge declined: nothing granted, credit.top_up.failed) or pending (3-D Secure or an answer not known yet)',
          schema: CreditTopUpSchema,
        },
        '402': problemResponse('no_payment_method: the customer has no default payment method; nothing is written'),
        '403': problemResponse('customer_cannot_buy_credit: portal_settings.customer_can_buy_credit is off'),
      },
    },
  };
}
