import { createHmac } from 'node:crypto';

/**
 * Webhook request signatures (docs/design.md §9). The dispatcher computes them in a piscina pool
 * (services/workers/webhook-signatures.ts, many requests per task). Per request:
 * - `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the current secret;
 * - `webhook-signature` (Standard Webhooks): `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed
 *   with the UTF-8 bytes of each secret still valid (current, and the previous one for 24 h after a
 *   rotation), space-separated.
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

export function signWebhookRequest(r: SignatureRequest): SignatureResult {
  const body = Buffer.from(r.body, 'utf8');
  const hex = createHmac('sha256', r.secrets[0]!).update(body).digest('hex');
  const signed = Buffer.concat([Buffer.from(`${r.id}.${r.timestamp}.`, 'utf8'), body]);
  const standard = r.secrets
    .map((s) => `v1,${createHmac('sha256', Buffer.from(s, 'utf8')).update(signed).digest('base64')}`)
    .join(' ');
  return { hex, standard };
}
