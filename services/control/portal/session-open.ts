import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { withAuditActor } from '../../../shared/audit/actor.js';
import { openPortalLink } from '../../domain/portal/sessions.js';
import { portalCookie } from './access.js';
import { portalRefused, seeOther } from './layout.js';
import { PORTAL_LABELS, portalLocale } from '../../domain/portal/portal-texts.js';
import { localeOfAcceptLanguage } from '../../domain/invoices/invoice-texts.js';
import { legalDetails } from '../../domain/invoices/store.js';

/**
 * GET /portal/start/:token — opening a portal link: the one-time token is exchanged for the portal cookie (a new
 * random value, so whoever saw the link cannot ride the session) and the browser goes to the overview. A link opened
 * before → 410, an expired one → 410 with its own message, anything else → 404.
 */
export function openPortalLinkRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/portal/start/:token',
    auth: 'public',
    handler: async (ctx) => {
      const ttl = deps.config.PORTAL_SESSION_TTL_SECONDS;
      // A GET that writes: audited here, as the pipeline audits the other methods.
      const opened = await withAuditActor(
        {
          type: 'public',
          address: ctx.clientAddress,
          request_id: ctx.requestId,
          operation: 'GET /portal/start/:token',
        },
        () => openPortalLink(deps.pg, ctx.params.token!, new Date(), ttl),
      );
      if (opened.state === 'opened')
        return seeOther('/portal', {
          'Set-Cookie': portalCookie(deps, opened.cookie, ttl),
          'Referrer-Policy': 'no-referrer',
        });
      // A link that existed names its session: the session's language, else its customer's; an unknown one names
      // no one: the browser's (Accept-Language), else English.
      const locale =
        opened.state === 'not_found'
          ? localeOfAcceptLanguage(ctx.headers['accept-language'])
          : portalLocale(opened.session.locale, (await legalDetails(deps.pg, opened.session.account_id)).locale);
      const refusals = PORTAL_LABELS[locale].refusals;
      if (opened.state === 'used') return portalRefused(deps.config, 410, refusals.linkUsed, locale);
      if (opened.state === 'expired') return portalRefused(deps.config, 410, refusals.linkExpired, locale);
      return portalRefused(deps.config, 404, refusals.linkUnknown, locale);
    },
    doc: {
      summary:
        'Opens a customer portal link once: sets the portal cookie and redirects to /portal (303); 410 for a used or expired link, 404 for an unknown one',
      tags: ['portal'],
      responses: {
        '303': { description: 'signed in: to /portal' },
        '404': { description: 'no such link (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
        '410': { description: 'used or expired (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
      },
    },
  };
}
