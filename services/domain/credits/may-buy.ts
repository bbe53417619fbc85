import type { Principal } from '../../../shared/auth/types.js';
import { hasScope } from '../../../shared/auth/types.js';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { ForbiddenError } from '../../../shared/errors.js';
import { readPortalSettings } from '../portal-settings/settings.js';

/** Buying credit (a top-up, auto-recharge's settings): operators always; a customer when portal_settings allow. */
export async function requireMayBuyCredit(pg: PgPool, principal: Principal): Promise<void> {
  if (hasScope(principal, 'admin')) return;
  if ((await readPortalSettings(pg)).settings.customer_can_buy_credit) return;
  throw new ForbiddenError(
    'The operator does not let customers buy credit themselves (portal_settings.customer_can_buy_credit).',
    'customer_cannot_buy_credit',
  );
}
