/**
 * The HTML of emails, from small template functions: every value passes through `escapeHtml` (a customer's or
 * seller's name is text, never markup) and every link through `safeHref` (http(s) only). Inline styles and one
 * table: what mail clients render alike. No template engine: the emails are four short layouts.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An http(s) URL, escaped for an attribute; anything else (javascript:, data:) is no link: null. */
export function safeHref(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? escapeHtml(u.href) : null;
  } catch {
    return null;
  }
}

export interface HtmlEmail {
  /** Shown at the top, before the content: "Test email — …" on a test clock's. */
  banner: string | null;
  /** Whether the message carries the seller's logo as the inline part `cid:LOGO_CID`. */
  logo: boolean;
  seller: string;
  heading: string;
  /** Paragraphs of plain text (escaped here). */
  paragraphs: string[];
  /** Label → value rows (escaped here), e.g. Amount → 49.99 USD. */
  facts: [string, string][];
  /** Buttons: label and URL (only http(s) URLs become links). */
  actions: { label: string; url: string | null }[];
  footer: string[];
}

export const LOGO_CID = 'seller-logo@meterline';

const FONT = 'font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif';

/** The email's HTML; `lang` is the language it is written in (the customer's locale). */
export function renderHtml(e: HtmlEmail, lang = 'en'): string {
  const p = (text: string) =>
    `<p style="margin:0 0 12px;${FONT};font-size:15px;line-height:1.5;color:#222">${escapeHtml(text)}</p>`;
  const facts = e.facts
    .map(
      ([k, v]) =>
        `<tr><td style="${FONT};font-size:14px;color:#666;padding:4px 16px 4px 0">${escapeHtml(k)}</td>` +
        `<td style="${FONT};font-size:14px;color:#222;padding:4px 0;text-align:right">${escapeHtml(v)}</td></tr>`,
    )
    .join('');
  const actions = e.actions
    .map((a) => ({ label: a.label, href: safeHref(a.url) }))
    .filter((a) => a.href)
    .map(
      (a) =>
        `<a href="${a.href}" style="display:inline-block;margin:0 8px 8px 0;padding:10px 18px;background:#1a56db;color:#fff;` +
        `border-radius:6px;text-decoration:none;${FONT};font-size:15px">${escapeHtml(a.label)}</a>`,
    )
    .join('');
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(lang)}"><head><meta charset="utf-8"><title>${escapeHtml(e.heading)}</title></head>`,
    '<body style="margin:0;padding:24px;background:#f4f5f7">',
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;margin:0 auto;background:#fff;border-radius:8px;padding:24px">',
    '<tr><td>',
    e.banner
      ? `<p style="margin:0 0 16px;padding:8px 12px;background:#fff4ce;border:1px solid #e0c060;border-radius:4px;${FONT};font-size:14px;color:#5c4400">${escapeHtml(e.banner)}</p>`
      : '',
    e.logo
      ? `<img src="cid:${LOGO_CID}" alt="${escapeHtml(e.seller)}" style="max-height:48px;max-width:200px;margin-bottom:16px">`
      : '',
    e.seller && !e.logo
      ? `<p style="margin:0 0 16px;${FONT};font-size:14px;font-weight:600;color:#444">${escapeHtml(e.seller)}</p>`
      : '',
    `<h1 style="margin:0 0 16px;${FONT};font-size:20px;color:#111">${escapeHtml(e.heading)}</h1>`,
    e.paragraphs.map(p).join(''),
    facts
      ? `<table role="presentation" cellpadding="0" cellspacing="0" style="margin:8px 0 16px">${facts}</table>`
      : '',
    actions ? `<div style="margin:8px 0 16px">${actions}</div>` : '',
    e.footer.length
      ? `<hr style="border:none;border-top:1px solid #e5e5e5;margin:16px 0">${e.footer
          .map((f) => `<p style="margin:0 0 4px;${FONT};font-size:13px;color:#777">${escapeHtml(f)}</p>`)
          .join('')}`
      : '',
    '</td></tr></table></body></html>',
  ].join('\n');
}
