import type { HttpReply } from '../../../shared/http/context.js';
import type { Config } from '../../../shared/config.js';
import { esc, pageHeaders } from '../hosted/templates.js';
import type { PortalVisit } from './access.js';
import { PORTAL_LABELS, portalLocale } from '../../domain/portal/portal-texts.js';
import type { Locale } from '../../domain/invoices/invoice-texts.js';

/**
 * The portal's HTML (docs/portal.md): server-rendered like the hosted pages — every interpolated value escaped with
 * `esc`, no script, one stylesheet of our own, under the hosted pages' Content-Security-Policy except that forms
 * may post to the portal itself. Every page has the same navigation and a "Back" link to the operator's site.
 */
export const PORTAL_SECTIONS = [
  ['/portal', 'overview'],
  ['/portal/invoices', 'invoices'],
  ['/portal/payment-methods', 'paymentMethods'],
  ['/portal/balances', 'balances'],
  ['/portal/billing-details', 'billingDetails'],
] as const;

export function portalHeaders(config: Pick<Config, 'STRIPE_JS_URL'>): Record<string, string> {
  const h = pageHeaders(config);
  h['Content-Security-Policy'] = h['Content-Security-Policy']!.replace("form-action 'none'", "form-action 'self'");
  return h;
}

export function portalPage(
  config: Pick<Config, 'STRIPE_JS_URL'>,
  o: { status?: number; title: string; body: string; current?: string; returnUrl?: string; locale?: string | null },
): HttpReply {
  // The navigation in the visit's language (services/domain/portal/portal-texts.ts).
  const l = PORTAL_LABELS[portalLocale(o.locale ?? null, null)];
  const nav = o.current
    ? `<nav aria-label="${esc(l.portal)}"><ul class="portal-nav">${PORTAL_SECTIONS.map(
        ([href, section]) =>
          `<li><a href="${href}"${href === o.current ? ' aria-current="page"' : ''}>${esc(l.sections[section])}</a></li>`,
      ).join(
        '',
      )}${o.returnUrl ? `<li><a id="return-link" href="${esc(o.returnUrl)}">${esc(l.back)}</a></li>` : ''}</ul></nav>`
    : '';
  const html = `<!doctype html>
<html lang="${esc(o.locale ?? 'en')}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${esc(o.title)}</title>
<link rel="stylesheet" href="/hosted/assets/hosted.css"><link rel="stylesheet" href="/portal/assets/portal.css"></head>
<body>${nav}<main>
${o.body}
</main>
</body>
</html>
`;
  return {
    status: o.status ?? 200,
    raw: html,
    contentType: 'text/html; charset=utf-8',
    headers: portalHeaders(config),
  };
}

/**
 * A refused portal page: the link or the session does not (or no longer) work, or the API refused an action — in the
 * visit's language when one is known; `detail` (the API's own message, English) follows the localized one.
 */
export function portalRefused(
  config: Pick<Config, 'STRIPE_JS_URL'>,
  status: 403 | 404 | 409 | 410 | 422,
  refusal: { title: string; message: string },
  locale: Locale = 'en',
  detail?: string,
): HttpReply {
  return portalPage(config, {
    status,
    title: refusal.title,
    locale,
    body: `<h1>${esc(refusal.title)}</h1>\n<p class="refused" id="portal-refused">${esc(refusal.message)}</p>${
      detail ? `\n<p class="detail" id="portal-refused-detail" lang="en">${esc(detail)}</p>` : ''
    }`,
  });
}

/** 303 to a portal page (after a form's POST: a refresh does not post again). */
export function seeOther(location: string, headers: Record<string, string> = {}): HttpReply {
  return { status: 303, raw: '', headers: { Location: location, 'Cache-Control': 'no-store', ...headers } };
}

export const PORTAL_CSS = `.portal-nav{display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;list-style:none;max-width:46rem;margin:1rem auto 0;padding:0 2rem}
.portal-nav a{color:#2b5bd7}.portal-nav a[aria-current=page]{font-weight:700;color:#1d2330}
a:focus,button:focus,input:focus,select:focus{outline:3px solid #f2b600;outline-offset:2px}
form.inline{display:inline-block;margin-right:.6rem}label{display:block;margin:.5rem 0 .1rem;font-weight:600}
input[type=text],select{padding:.4rem;font-size:1rem;width:100%;max-width:24rem;box-sizing:border-box}
.flash{padding:.6rem;border-radius:4px;background:#dcf5e3;color:#17603a}.flash.error{background:#fde8e8;color:#8a1c1c}
svg.usage{width:100%;height:auto;max-width:40rem}.muted{color:#667}`;

/**
 * A page of a signed-in visit: the title as its heading, what a finished action says (`?done=`, as `flash`), the
 * section's navigation, and the session's Back link and language.
 */
export function visitPage(
  config: Pick<Config, 'STRIPE_JS_URL'>,
  visit: PortalVisit,
  o: { title: string; current: string; body: string; flash?: string },
): HttpReply {
  return portalPage(config, {
    title: o.title,
    current: o.current,
    returnUrl: visit.session.return_url,
    locale: visit.locale,
    body: `<h1>${esc(o.title)}</h1>
${o.flash ? `<p class="flash" id="flash" role="status">${esc(o.flash)}</p>` : ''}
${o.body}`,
  });
}
