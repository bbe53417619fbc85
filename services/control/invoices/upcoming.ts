import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { upcomingInvoice } from '../../domain/billing/upcoming.js';
import { UpcomingInvoiceQuery, UpcomingInvoiceSchema } from '../../../shared/api/invoices.js';
import { toInvoiceLine } from './representation.js';
import { parseUpcomingInvoice } from './input.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { upcomingOf } from './upcoming-of.js';

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * GET /v1/billing/invoices/upcoming?subscription_id=…|customer_id=… — the invoice the current period would produce
 * if it closed now (the account's time: its test clock's for a clocked customer): the billing run's maths
 * (services/domain/billing/price-periods.ts) over the period's usage so far, nothing stored. An operator asks for
 * any customer's (upcoming-of.ts); another account's subscription → 404; a canceled one has no upcoming invoice → 409.
 */
export function upcomingInvoiceRoute(deps: ApiDeps): RouteDef<UpcomingInvoiceQuery> {
  return {
    method: 'GET',
    path: '/v1/billing/invoices/upcoming',
    auth: 'read',
    input: parseUpcomingInvoice,
    handler: async (ctx, q) => {
      const { accountId, subscriptionId } = await upcomingOf(deps.pg, ctx.principal!, q);
      const u = await upcomingInvoice(
        { pg: deps.pg, clickhouse: deps.clickhouse, database: deps.config.CLICKHOUSE_DATABASE },
        accountId,
        subscriptionId,
        (await accountTime(deps.pg, accountId)).now,
      );
      return reply.ok({
        id: null,
        number: null,
        customer_id: u.customer_id,
        subscription_id: u.subscription_id,
        status: 'draft',
        currency: u.currency,
        subtotal: new JsonDecimal(u.subtotal),
        tax: new JsonDecimal(u.tax),
        amount: new JsonDecimal(u.amount),
        period_start: isoDate(u.periodStartMs),
        period_end: isoDate(u.periodEndMs - 86_400_000),
        lines: u.lines.map(toInvoiceLine),
        attempt_count: 0,
        next_payment_attempt_at: null,
        last_payment_error: null,
        created_at: u.at.toISOString(),
        paid_at: null,
      });
    },
    doc: {
      summary:
        'The upcoming invoice of a subscription (or of a customer’s one active subscription): its current period priced with the usage so far (nothing stored)',
      tags: ['billing'],
      query: UpcomingInvoiceQuery,
      responses: { '200': { description: 'A draft invoice (id null, status draft)', schema: UpcomingInvoiceSchema } },
    },
  };
}
