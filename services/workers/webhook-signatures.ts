import { signWebhookRequest, type SignatureRequest, type SignatureResult } from '../domain/webhooks/signing.js';

/**
 * piscina task: the signatures of many webhook requests at once (one task per dispatcher batch, so the
 * thread hop is paid once per batch, not once per request). Runs in services/workers/pool.ts's pool.
 */
export default function signWebhookRequests(batch: SignatureRequest[]): SignatureResult[] {
  return batch.map(signWebhookRequest);
}
