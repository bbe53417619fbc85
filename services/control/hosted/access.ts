import type { ApiDeps } from '../../../shared/http/route.js';
import type { HttpReply, RequestContext } from '../../../shared/http/context.js';
import { NotFoundError } from '../../../shared/errors.js';
import { checkCardLink, checkInvoiceLink } from '../../domain/hosted-pages/links.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import { getInvoiceById } from '../../domain/invoices/store.js';
import type { InvoiceWithLines } from '../../domain/invoices/types.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { processorFor } from '../../domain/payments/create.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { legalDetails } from '../../domain/invoices/store.js';
import { localeOf, localeOfAcceptLanguage } from '../../domain/invoices/invoice-texts.js';
import { linkRefusedPage } from './templates.js';

/** What every hosted route opens its link with: the invoice (or card page) and the account it belongs to. */
export type Opened<T> =
  | ({ state: 'ok'; accountId: string } & T)
  | { state: 'gone'; accountId: string }
  | { state: 'not_found' };

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

/**
 * The 404/410 page of a link that does not (or no longer) work, in the language of whoever opens it: a link that
 * existed (410) names its customer, so the customer's locale; an unknown link names no one, so the browser's
 * Accept-Language (one of the five), else English.
 */
export async function refusedLinkPage(
  deps: ApiDeps,
  ctx: RequestContext,
  opened: { state: 'gone'; accountId: string } | { state: 'not_found' },
): Promise<HttpReply> {
  const locale =
    opened.state === 'gone'
      ? localeOf((await legalDetails(deps.pg, opened.accountId)).locale)
      : localeOfAcceptLanguage(ctx.headers['accept-language']);
  return linkRefusedPage(deps.config, opened.state, locale);
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
