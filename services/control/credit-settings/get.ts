import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreditSettingsSchema, GetCreditSettingsQuery } from '../../../shared/api/credit-settings.js';
import { autoRechargeStatus, readWalletSettings } from '../../domain/credits/wallet-store.js';
import { customerOfAccount } from '../../domain/credits/top-ups-store.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { parseGetCreditSettings } from './input.js';
import { toCreditSettings } from './representation.js';

/** GET /v1/credit_settings?customer_id — the caller's (or, admin, a customer's) wallet settings and their status. */
export function getCreditSettingsRoute(deps: ApiDeps): RouteDef<GetCreditSettingsQuery> {
  return {
    method: 'GET',
    path: '/v1/credit_settings',
    auth: 'read',
    input: parseGetCreditSettings,
    handler: async (ctx, q) => {
      const accountId = await accountActedFor(deps.pg, ctx.principal!, q.customer_id);
      const { now } = await accountTime(deps.pg, accountId);
      const w = await readWalletSettings(deps.pg, accountId);
      const status = await autoRechargeStatus(deps.pg, accountId, now);
      return reply.ok(toCreditSettings((await customerOfAccount(deps.pg, accountId))!, w, status));
    },
    doc: {
      summary:
        'A customer’s wallet settings: auto-recharge (with this month’s top-ups and the last failure) and the low-balance alert',
      tags: ['billing'],
      query: GetCreditSettingsQuery,
      responses: { '200': { description: 'The settings and their status', schema: CreditSettingsSchema } },
    },
  };
}
