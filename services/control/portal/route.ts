import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import type { HttpReply, RequestContext } from '../../../shared/http/context.js';
import { DomainError } from '../../../shared/errors.js';
import { asPortalCustomer, csrfValid, portalVisit, type PortalVisit } from './access.js';
import { portalRefused, seeOther } from './layout.js';

/**
 * The portal's routes: public as far as tokens go (the portal cookie signs the customer in), so each one checks its
 * visit first — no live session → 403 — and every POST its form's CSRF token (403 when missing or wrong). A refusal
 * of the API operation underneath (another customer's id: 404; not allowed by portal settings: 403; a canceled
 * subscription: 409) is shown as a page with that status and the API's own message.
 */
type Render = (visit: PortalVisit, ctx: RequestContext) => Promise<HttpReply>;

const ended = (deps: ApiDeps) =>
  portalRefused(
    deps.config,
    403,
    'Your portal session has ended',
    'Sign in again through the link on the site where you manage your account.',
  );

function refusedBy(deps: ApiDeps, e: unknown): HttpReply {
  if (!(e instanceof DomainError)) throw e;
  const status = e.status === 404 ? 404 : e.status === 409 ? 409 : e.status === 422 ? 422 : 403;
  const titles: Record<number, string> = {
    403: 'Not allowed',
    404: 'Page not found',
    409: 'Not possible now',
    422: 'Please check your input',
  };
  const fields = e.errors?.length ? ` (${e.errors.map((f) => `${f.field}: ${f.message}`).join('; ')})` : '';
  return portalRefused(deps.config, status as 403, titles[status]!, `${e.message}${fields}`);
}

export function portalGet(deps: ApiDeps, path: string, summary: string, render: Render): RouteDef {
  return {
    method: 'GET',
    path,
    auth: 'public',
    handler: async (ctx) => {
      const visit = await portalVisit(deps, ctx);
      if (!visit) return ended(deps);
      return render(visit, ctx).catch((e) => refusedBy(deps, e));
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
      if (!visit) return ended(deps);
      const form = (ctx.body ?? {}) as Record<string, string>;
      if (!csrfValid(visit, form.csrf))
        return portalRefused(
          deps.config,
          403,
          'This form has expired',
          'The form was not sent from this portal session. Go back, reload the page and try again.',
        );
      try {
        const done = await asPortalCustomer(visit, ctx, `POST ${path}`, () => act(visit, ctx, form));
        return typeof done === 'string' ? seeOther(done) : done;
      } catch (e) {
        return refusedBy(deps, e);
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
