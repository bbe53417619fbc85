import type { PgPool } from '../../../shared/clients/postgres.js';
import { hasScope, type Principal } from '../../../shared/auth/types.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import { accountActedFor } from '../customers/acting-for.js';
import { meterForUsage } from '../usage/store.js';
import { insertAlert } from './store.js';
import type { AlertRow, AlertViewer, NewAlert } from './types.js';

/** Whose alerts a caller sees: an admin (the operator) every customer's, or one's; any other token only its own. */
export function alertViewer(principal: Principal, customerAccountId?: string): AlertViewer {
  return hasScope(principal, 'admin')
    ? { kind: 'operator', accountId: customerAccountId }
    : { kind: 'account', accountId: principal.accountId };
}

/**
 * Creates an alert on the customer it names (docs/alerts.md): an admin for any customer, any other token only for
 * itself (acting-for's rule: naming another customer is 403). Without `customer_id` the alert is on the caller —
 * except an admin's usage alert on a deployment meter, which watches every customer of the meter. The meter must
 * be one the watched customer records to: its own or a deployment meter (else 422 on `meter_id`).
 */
export async function createAlert(
  pg: PgPool,
  principal: Principal,
  a: NewAlert,
  maxPerAccount: number,
): Promise<AlertRow> {
  const accountId = await accountActedFor(pg, principal, a.customerId);
  if (a.metric === 'amount') {
    if (a.customerId === undefined && hasScope(principal, 'admin'))
      throw new ValidationError([
        { field: 'customer_id', message: 'an operator names the customer whose invoice amount is watched' },
      ]);
    return insertAlert(
      pg,
      {
        accountId,
        metric: 'amount',
        meterId: null,
        currency: a.currency,
        thresholds: a.thresholds,
      },
      maxPerAccount,
    );
  }
  const meter = await meterForUsage(pg, accountId, a.meterId!).catch((err: unknown) => {
    if (err instanceof NotFoundError)
      throw new ValidationError([{ field: 'meter_id', message: `no meter ${a.meterId} of the watched customer` }]);
    throw err;
  });
  const everyCustomer = a.customerId === undefined && meter.scope === 'deployment' && hasScope(principal, 'admin');
  return insertAlert(
    pg,
    {
      accountId: everyCustomer ? null : accountId,
      metric: 'usage',
      meterId: a.meterId,
      currency: null,
      thresholds: a.thresholds,
    },
    maxPerAccount,
  );
}
