import { createHmac } from 'node:crypto';

/**
 * Webhook request signatures (docs/design.md §9). The dispatcher computes them in a piscina pool
 * (services/workers/webhook-signatures.ts, many requests per task). Per request:
 * - `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the current secret;
 * - `webhook-signature` (Standard Webhooks): `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed
 *   with each secret still valid (current, and the previous one for 24 h after a rotation; standardWebhooksKey
 *   says with which bytes), space-separated.
 */
export interface SignatureRequest {
  /** Event id (webhook-id). */
  id: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  body: string;
  /** Current secret first, then a previous one still valid. */
  secrets: string[];
}

export interface SignatureResult {
  hex: string;
  standard: string;
}

const STANDARD_PREFIX = 'whsec_';

/**
 * The key of the Standard Webhooks signature (docs/design.md §9): a `whsec_<base64>` secret signs with the bytes
 * its base64 decodes to, as the spec says and its libraries verify (`new Webhook(secret)`, the secret as given);
 * any other secret (caller-chosen text, and the base64url secrets generated before) with its UTF-8 bytes.
 */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith(STANDARD_PREFIX)) {
    const encoded = secret.slice(STANDARD_PREFIX.length);
    const bytes = Buffer.from(encoded, 'base64');
    // Node decodes leniently (base64url characters, missing padding): only canonical, padded standard base64
    // — the one form the spec's libraries read — round-trips to the same text.
    if (bytes.length > 0 && bytes.toString('base64') === encoded) return bytes;
  }
  return Buffer.from(secret, 'utf8');
}

export function signWebhookRequest(r: SignatureRequest): SignatureResult {
  const body = Buffer.from(r.body, 'utf8');
  const hex = createHmac('sha256', r.secrets[0]!).update(body).digest('hex');
  const signed = Buffer.concat([Buffer.from(`${r.id}.${r.timestamp}.`, 'utf8'), body]);
  const standard = r.secrets
    .map((s) => `v1,${createHmac('sha256', standardWebhooksKey(s)).update(signed).digest('base64')}`)
    .join(' ');
  return { hex, standard };
}
