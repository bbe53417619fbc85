import type { RequestContext } from '../../../shared/http/context.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { CreatePaymentMethodLinkBody, HostedPayBody, HostedSaveCardBody } from '../../../shared/api/hosted-pages.js';

/** The hosted pages' one validation place (schemas in shared/api/hosted-pages.ts). */
const payBody = bodyValidator<HostedPayBody>(HostedPayBody);
const saveCardBody = bodyValidator<HostedSaveCardBody>(HostedSaveCardBody);
const linkBody = bodyValidator<CreatePaymentMethodLinkBody>(CreatePaymentMethodLinkBody);

export const parseHostedPay = (ctx: RequestContext): HostedPayBody => payBody.parse(ctx.body);
export const parseHostedSaveCard = (ctx: RequestContext): HostedSaveCardBody => saveCardBody.parse(ctx.body);
/** No body is the caller's own link. */
export const parsePaymentMethodLink = (ctx: RequestContext): CreatePaymentMethodLinkBody =>
  ctx.body === undefined ? {} : linkBody.parse(ctx.body);
