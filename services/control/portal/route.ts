import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import type { HttpReply, RequestContext } from '../../../shared/http/context.js';
import { DomainError } from '../../../shared/errors.js';
import { asPortalCustomer, csrfValid, portalVisit, type PortalVisit } from './access.js';
import { portalRefused, seeOther } from './layout.js';
import { PORTAL_LABELS } from '../../domain/portal/portal-texts.js';
import { localeOfAcceptLanguage } from '../../domain/invoices/invoice-texts.js';

/**
 * The portal's routes: public as far as tokens go (the portal cookie signs the customer in), so each one checks its
 * visit first — no live session → 403 — and every POST its form's CSRF token (403 when missing or wrong). A refusal
 * of the API operation underneath (another customer's id: 404; not allowed by portal settings: 403; a canceled
 * subscription: 409) is shown as a page with that status and the API's own message.
 */
type Render = (visit: PortalVisit, ctx: RequestContext) => Promise<HttpReply>;

/** No live session: no customer is known, so the browser's language (Accept-Language), else English. */
const ended = (deps: ApiDeps, ctx: RequestContext) => {
  const locale = localeOfAcceptLanguage(ctx.headers['accept-language']);
  return portalRefused(deps.config, 403, PORTAL_LABELS[locale].refusals.ended, locale);
};

const REFUSALS = { 403: 'notAllowed', 404: 'notFound', 409: 'conflict', 422: 'invalid' } as const;

/** The API refused: in English its own message (as always); in another language a localized one, then the API's. */
function refusedBy(deps: ApiDeps, visit: PortalVisit, e: unknown): HttpReply {
  if (!(e instanceof DomainError)) throw e;
  const status = e.status === 404 ? 404 : e.status === 409 ? 409 : e.status === 422 ? 422 : 403;
  const fields = e.errors?.length ? ` (${e.errors.map((f) => `${f.field}: ${f.message}`).join('; ')})` : '';
  const refusal = PORTAL_LABELS[visit.locale].refusals[REFUSALS[status]];
  const api = `${e.message}${fields}`;
  return visit.locale === 'en'
    ? portalRefused(deps.config, status, { title: refusal.title, message: api })
    : portalRefused(deps.config, status, refusal, visit.locale, api);
}

export function portalGet(deps: ApiDeps, path: string, summary: string, render: Render): RouteDef {
  return {
    method: 'GET',
    path,
    auth: 'public',
    handler: async (ctx) => {
      const visit = await portalVisit(deps, ctx);
      if (!visit) return ended(deps, ctx);
      return render(visit, ctx).catch((e) => refusedBy(deps, visit, e));
    },
    doc: {
      summary: `Customer portal (HTML, portal cookie): ${summary}`,
      tags: ['portal'],
      responses: {
        '200': { description: 'the page', schema: { type: 'string' }, contentType: 'text/html' },
        '403': { description: 'no live portal session (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
        '404': { description: 'not this customer’s (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
      },
    },
  };
}

/** A form's POST: the action runs as the customer, then 303 to where it says (a refresh does not post again). */
export function portalPost(
  deps: ApiDeps,
  path: string,
  summary: string,
  act: (visit: PortalVisit, ctx: RequestContext, form: Record<string, string>) => Promise<string | HttpReply>,
): RouteDef {
  return {
    method: 'POST',
    path,
    auth: 'public',
    body: 'form-or-json',
    idempotent: false,
    handler: async (ctx) => {
      const visit = await portalVisit(deps, ctx);
      if (!visit) return ended(deps, ctx);
      const form = (ctx.body ?? {}) as Record<string, string>;
      if (!csrfValid(visit, form.csrf))
        return portalRefused(deps.config, 403, PORTAL_LABELS[visit.locale].refusals.formExpired, visit.locale);
      try {
        const done = await asPortalCustomer(visit, ctx, `POST ${path}`, () => act(visit, ctx, form));
        return typeof done === 'string' ? seeOther(done) : done;
      } catch (e) {
        return refusedBy(deps, visit, e);
      }
    },
    doc: {
      summary: `Customer portal form (portal cookie and CSRF token): ${summary}`,
      tags: ['portal'],
      responses: {
        '303': { description: 'done: back to the page' },
        '403': {
          description: 'no live session, a wrong CSRF token, or not allowed (HTML)',
          schema: { type: 'string' },
          contentType: 'text/html',
        },
        '404': { description: 'not this customer’s (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
      },
    },
  };
}

/** The hidden field every portal form carries. */
export const csrfField = (visit: PortalVisit) => `<input type="hidden" name="csrf" value="${visit.csrf}">`;
