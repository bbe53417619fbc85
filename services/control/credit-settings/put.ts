import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { CreditSettingsSchema, PutCreditSettingsBody } from '../../../shared/api/credit-settings.js';
import { autoRechargeStatus, saveWalletSettings, type WalletChange } from '../../domain/credits/wallet-store.js';
import { customerOfAccount } from '../../domain/credits/top-ups-store.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { requireMayBuyCredit } from '../../domain/credits/may-buy.js';
import { parsePutCreditSettings } from './input.js';
import { toCreditSettings } from './representation.js';

/**
 * PUT /v1/credit_settings — sets a wallet's settings whole (auto-recharge, low-balance alert): operators for any
 * customer, a customer for itself when portal_settings.customer_can_buy_credit allows (auto-recharge buys credit).
 * Saving clears a past auto-recharge failure: the billing run may buy again.
 */
export function putCreditSettingsRoute(deps: ApiDeps): RouteDef<WalletChange & { customerId?: string }> {
  return {
    method: 'PUT',
    path: '/v1/credit_settings',
    auth: 'write',
    input: parsePutCreditSettings,
    handler: async (ctx, change) => {
      const accountId = await accountActedFor(deps.pg, ctx.principal!, change.customerId);
      await requireMayBuyCredit(deps.pg, ctx.principal!);
      const w = await saveWalletSettings(deps.pg, accountId, change);
      const { now } = await accountTime(deps.pg, accountId);
      const status = await autoRechargeStatus(deps.pg, accountId, now);
      return reply.ok(toCreditSettings((await customerOfAccount(deps.pg, accountId))!, w, status));
    },
    doc: {
      summary: 'Set a customer’s auto-recharge and low-balance alert',
      tags: ['billing'],
      requestBody: PutCreditSettingsBody,
      responses: {
        '200': { description: 'The settings and their status', schema: CreditSettingsSchema },
        '403': problemResponse('customer_cannot_buy_credit: portal_settings.customer_can_buy_credit is off'),
      },
    },
  };
}
