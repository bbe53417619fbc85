import type { HttpReply } from '../../../shared/http/context.js';
import type { Scope } from '../../../shared/auth/types.js';

/** Server-rendered pages of the authorization endpoint. Every interpolated value is escaped. */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  read: 'Read your meters, usage, invoices, billing details, webhooks and the product catalog',
  write: 'Create and change meters, usage, webhooks, billing details, payment methods and subscriptions',
  admin: 'Administer the product catalog (operators only)',
};

/**
 * No caching, no framing (clickjacking), no referrer (the URL carries the request), no scripts at all.
 * form-action is deliberately absent: browsers apply it to the redirect that follows the consent
 * POST, which goes to the client's redirect URI.
 */
const PAGE_HEADERS = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:1.2rem;padding:.55rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #345;cursor:pointer}
button[value=approve],.primary{background:#2b5bd7;color:#fff;border-color:#2b5bd7}
.error{background:#fde8e8;color:#8a1c1c;padding:.6rem .8rem;border-radius:4px}
.note{color:#555;font-size:.9rem}ul{padding-left:1.2rem}li{margin:.3rem 0}`;

export function page(status: number, title: string, body: string, headers: Record<string, string> = {}): HttpReply {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · meterline</title><style>${STYLE}</style></head>
<body><main>
${body}
</main></body>
</html>
`;
  return { status, raw: html, contentType: 'text/html; charset=utf-8', headers: { ...PAGE_HEADERS, ...headers } };
}

const errorBlock = (message: string | undefined) =>
  message ? `<p class="error" role="alert">${escapeHtml(message)}</p>\n` : '';

export function signInPage(o: {
  status?: number;
  clientName: string;
  csrfToken: string;
  email?: string;
  error?: string;
  headers?: Record<string, string>;
  /** Single sign-on's start (docs/sso.md), when configured. */
  ssoUrl?: string;
}): HttpReply {
  const sso = o.ssoUrl
    ? `\n<p class="note">Staff of the operator: <a href="${escapeHtml(o.ssoUrl)}">Sign in with SSO</a></p>`
    : '';
  return page(
    o.status ?? 200,
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(o.clientName)}</h1>
${errorBlock(o.error)}<form method="post">
<input type="hidden" name="csrf_token" value="${escapeHtml(o.csrfToken)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(o.email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" class="primary">Sign in</button>
</form>${sso}`,
    o.headers,
  );
}

export function consentPage(o: {
  status?: number;
  clientName: string;
  email: string;
  granted: readonly Scope[];
  withheld: readonly Scope[];
  csrfToken: string;
  error?: string;
}): HttpReply {
  const items = o.granted.map((s) => `<li><strong>${s}</strong>: ${escapeHtml(SCOPE_DESCRIPTIONS[s])}</li>`).join('\n');
  const withheld = o.withheld.length
    ? `<p class="note">Also requested, but your account cannot grant it: ${o.withheld.map((s) => `<strong>${s}</strong>`).join(', ')} (only operators can).</p>\n`
    : '';
  return page(
    o.status ?? 200,
    'Authorize access',
    `<h1>${escapeHtml(o.clientName)} wants to access your meterline account</h1>
${errorBlock(o.error)}<p>Signed in as <strong>${escapeHtml(o.email)}</strong>. If you approve, <strong>${escapeHtml(o.clientName)}</strong> will be able to:</p>
<ul>
${items}
</ul>
${withheld}<form method="post">
<input type="hidden" name="csrf_token" value="${escapeHtml(o.csrfToken)}">
<button name="decision" value="approve">Approve</button>
<button name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** For requests that must not redirect (unknown client, unregistered redirect URI, RFC 6749 §4.1.2.1). */
export function errorPage(
  status: number,
  title: string,
  message: string,
  headers: Record<string, string> = {},
): HttpReply {
  return page(
    status,
    title,
    `<h1>${escapeHtml(title)}</h1>\n<p class="error" role="alert">${escapeHtml(message)}</p>\n<p class="note">Return to the application you came from and try again. If this keeps happening, tell its developers.</p>`,
    headers,
  );
}
