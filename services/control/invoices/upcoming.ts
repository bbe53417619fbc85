import Type from 'typebox';
import type { RouteDef } from '../../../shared/http/server.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { ConflictError } from '../../../shared/errors.js';
import { JsonDecimal, jsonReply } from '../../../shared/money/json.js';
import type { ApiDeps } from '../../api/modules.js';
import { pricePeriods } from '../../billing/pricing.js';
import { currentPeriod } from '../subscriptions/periods.js';
import { getSubscription } from '../subscriptions/store.js';
import { InvoiceLineSchema } from './schemas.js';

export const UpcomingInvoiceQuery = Type.Object(
  { subscription_id: Type.String({ minLength: 1, maxLength: 64, description: 'sub_… of the caller' }) },
  { additionalProperties: false },
);
type UpcomingInvoiceQuery = Type.Static<typeof UpcomingInvoiceQuery>;
const query = queryValidator<UpcomingInvoiceQuery>(UpcomingInvoiceQuery);

const Money = (description: string) => Type.Number({ description: `${description}; an exact decimal written as a JSON number` });

export const UpcomingInvoiceSchema = Type.Object(
  {
    id: Type.Null({ description: 'not stored: null' }),
    customer_id: Type.String(),
    subscription_id: Type.String(),
    status: Type.Literal('draft'),
    currency: Type.String(),
    amount: Money('the sum of the lines'),
    period_start: Type.String({ format: 'date' }),
    period_end: Type.String({ format: 'date' }),
    lines: Type.Array(InvoiceLineSchema),
    attempt_count: Type.Literal(0),
    next_payment_attempt_at: Type.Null(),
    last_payment_error: Type.Null(),
    created_at: Type.String({ format: 'date-time', description: 'the instant the draft was computed; usage counts up to it' }),
    paid_at: Type.Null(),
  },
  { additionalProperties: false },
);

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * GET /v1/billing/invoices/upcoming?subscription_id=… — the invoice the current period would produce if it
 * closed now: the billing run's maths (services/billing/pricing.ts) over the period's usage so far, nothing
 * stored. Another account's subscription → 404; a canceled one has no upcoming invoice → 409.
 */
export function upcomingInvoiceRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/invoices/upcoming',
    auth: 'read',
    handler: async (ctx) => {
      const q = query.parseQuery(ctx.query);
      const accountId = ctx.principal!.accountId;
      const sub = await getSubscription(deps.pg, accountId, q.subscription_id);
      if (sub.row.status === 'canceled') throw new ConflictError(`Subscription ${q.subscription_id} is canceled: it has no upcoming invoice.`, 'subscription_canceled');
      const now = new Date();
      const period = currentPeriod(sub.row, now);
      const [priced] = await pricePeriods({ clickhouse: deps.clickhouse, database: deps.config.CLICKHOUSE_DATABASE }, deps.pg, [
        { subscription_id: sub.row.id, account_id: accountId, currency: sub.row.currency, startMs: period.start.getTime(), usageEndMs: now.getTime() },
      ]);
      const customer = await deps.pg.query<{ customer_id: string }>('SELECT customer_id FROM accounts WHERE id = $1', [accountId]);
      return jsonReply(200, {
        id: null,
        customer_id: customer.rows[0]!.customer_id,
        subscription_id: sub.row.id,
        status: 'draft',
        currency: priced!.currency,
        amount: new JsonDecimal(priced!.amount),
        period_start: isoDate(period.start.getTime()),
        period_end: isoDate(period.end.getTime() - 86_400_000),
        lines: priced!.lines.map((l) => ({ ...l, quantity: new JsonDecimal(l.quantity), unit_price: new JsonDecimal(l.unit_price), amount: new JsonDecimal(l.amount) })),
        attempt_count: 0,
        next_payment_attempt_at: null,
        last_payment_error: null,
        created_at: now.toISOString(),
        paid_at: null,
      });
    },
    doc: {
      summary: 'The upcoming invoice of a subscription: its current period priced with the usage so far (nothing stored)',
      tags: ['billing'],
      query: UpcomingInvoiceQuery,
      responses: { '200': { description: 'A draft invoice (id null, status draft)', schema: UpcomingInvoiceSchema } },
    },
  };
}
