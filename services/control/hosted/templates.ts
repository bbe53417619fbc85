import type { HttpReply } from '../../../shared/http/context.js';
import type { Config } from '../../../shared/config.js';
import type { Locale } from '../../domain/invoices/invoice-texts.js';
import { PAGE_LABELS } from '../../domain/hosted-pages/page-texts.js';

/**
 * The hosted pages' HTML (docs/payments.md "Hosted pages"): server-rendered, every interpolated value escaped with
 * `esc` (customer names, addresses, line descriptions are the customer's or the operator's text), one static script
 * and one stylesheet of our own plus Stripe.js, under a Content-Security-Policy that allows nothing else.
 */
export function esc(s: string | number | null | undefined): string {
  return String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/**
 * Where Stripe.js runs: its script's origin, plus — for Stripe's own js.stripe.com — the API it calls and the frames
 * it opens (Stripe's documented CSP). The simulator's stand-in serves all three from its one origin.
 */
export function stripeOrigins(jsUrl: string): { script: string[]; connect: string[]; frame: string[] } {
  const origin = new URL(jsUrl).origin;
  if (origin === 'https://js.stripe.com')
    return {
      script: [origin],
      connect: ['https://api.stripe.com'],
      frame: [origin, 'https://hooks.stripe.com'],
    };
  return { script: [origin], connect: [origin], frame: [origin] };
}

/** No caching (the page holds a secret link), no framing, no referrer (the URL is the secret), Stripe.js only. */
export function pageHeaders(config: Pick<Config, 'STRIPE_JS_URL'>): Record<string, string> {
  const s = stripeOrigins(config.STRIPE_JS_URL);
  return {
    'Cache-Control': 'no-store',
    'Content-Security-Policy': [
      "default-src 'none'",
      `script-src 'self' ${s.script.join(' ')}`,
      "style-src 'self'",
      "img-src 'self' data:",
      `connect-src 'self' ${s.connect.join(' ')}`,
      `frame-src ${s.frame.join(' ')}`,
      "form-action 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
}

export function htmlPage(
  config: Pick<Config, 'STRIPE_JS_URL'>,
  o: {
    status?: number;
    title: string;
    body: string;
    stripeJs?: boolean;
    script?: boolean;
    checkoutScript?: boolean;
    /** The language the page is written in (the customer's locale); default en. */
    lang?: string;
  },
): HttpReply {
  const scripts = [
    ...(o.stripeJs ? [`<script src="${esc(config.STRIPE_JS_URL)}"></script>`] : []),
    ...(o.script ? ['<script src="/hosted/assets/pay.js"></script>'] : []),
    ...(o.checkoutScript ? ['<script src="/hosted/assets/checkout.js"></script>'] : []),
  ].join('\n');
  const html = `<!doctype html>
<html lang="${esc(o.lang ?? 'en')}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${esc(o.title)}</title>
<link rel="stylesheet" href="/hosted/assets/hosted.css"></head>
<body><main>
${o.body}
</main>
${scripts}
</body>
</html>
`;
  return {
    status: o.status ?? 200,
    raw: html,
    contentType: 'text/html; charset=utf-8',
    headers: pageHeaders(config),
  };
}

/** 404: no such link (a wrong token is told exactly like an unknown invoice); 410: it existed and was revoked. */
export function linkRefusedPage(
  config: Pick<Config, 'STRIPE_JS_URL'>,
  state: 'gone' | 'not_found',
  locale: Locale = 'en',
): HttpReply {
  const l = state === 'gone' ? PAGE_LABELS[locale].linkGone : PAGE_LABELS[locale].linkUnknown;
  return htmlPage(config, {
    status: state === 'gone' ? 410 : 404,
    lang: locale,
    title: l.title,
    body: `<h1>${esc(l.title)}</h1>
<p class="refused" id="link-refused">${esc(l.message)}</p>`,
  });
}

/**
 * A text with HTML in some of its slots (a plan's name in a span): the label is called with placeholders, escaped,
 * then each placeholder replaced by its HTML (already escaped by the caller).
 */
export function escWith(label: (...slots: string[]) => string, ...html: string[]): string {
  const marks = html.map((_, i) => `\u0000${i}\u0000`);
  return marks.reduce((out, mark, i) => out.replace(mark, html[i]!), esc(label(...marks)));
}
