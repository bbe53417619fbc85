import type { ApiDeps } from '../../../shared/http/route.js';
import type { RequestContext } from '../../../shared/http/context.js';
import { NotFoundError } from '../../../shared/errors.js';
import { checkCardLink, checkInvoiceLink } from '../../domain/hosted-pages/links.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import { getInvoiceById } from '../../domain/invoices/store.js';
import type { InvoiceWithLines } from '../../domain/invoices/types.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { processorFor } from '../../domain/payments/create.js';
import { accountTime } from '../../domain/test-clocks/store.js';

/** What every hosted route opens its link with: the invoice (or card page) and the account it belongs to. */
export type Opened<T> = ({ state: 'ok'; accountId: string } & T) | { state: 'gone' | 'not_found' };

export async function openInvoice(deps: ApiDeps, ctx: RequestContext): Promise<Opened<{ invoice: InvoiceWithLines }>> {
  const id = ctx.params.invoice_id!;
  const invoice = await getInvoiceById(deps.pg, id).catch((e) => {
    if (e instanceof NotFoundError) return null;
    throw e;
  });
  const check = await checkInvoiceLink(
    deps.pg,
    hostedKey(deps.config.SECRET_KEY),
    invoice?.invoice ?? null,
    ctx.params.token!,
  );
  return check.state === 'ok' ? { ...check, invoice: invoice! } : check;
}

export async function openCardPage(deps: ApiDeps, ctx: RequestContext): Promise<Opened<object>> {
  return checkCardLink(deps.pg, ctx.params.token!, new Date());
}

/** For the JSON operations behind a page: a link that does not (or no longer) work is 404, nothing done. */
export function orNotFound<T>(opened: Opened<T>): { state: 'ok'; accountId: string } & T {
  if (opened.state !== 'ok') throw new NotFoundError('This link does not work (unknown, revoked or expired).');
  return opened;
}

/**
 * The processor that charges the account, as the POST /v1 routes pick it (a customer on a test clock: the sandbox),
 * its time, and whether it takes a new card in the browser (Stripe's card element, with a publishable key).
 */
export async function chargingFor(deps: ApiDeps, live: PaymentProcessor, accountId: string) {
  const { now, clockId } = await accountTime(deps.pg, accountId);
  const processor = processorFor(deps.pg, live, clockId);
  const inBrowser = Boolean(processor.createSetupIntent && deps.config.STRIPE_PUBLISHABLE_KEY);
  return { now, processor, inBrowser };
}
