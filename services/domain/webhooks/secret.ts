import { randomBytes } from 'node:crypto';
import { deriveKey, seal, unseal } from '../../../shared/secret.js';

/**
 * Webhook signing secrets are write-only for callers and sealed at rest (AES-256-GCM under a key derived
 * from SECRET_KEY): delivery needs the plaintext to sign, so a one-way hash would not do.
 */
export function webhookSecretKey(secretKey: Buffer): Buffer {
  return deriveKey(secretKey, 'webhook-secrets');
}

/**
 * 32 random bytes as Standard Webhooks writes a secret: `whsec_` + standard base64 (44 characters, one `=`), so a
 * receiver verifies with the spec's libraries and the secret as given (the signing key is the decoded bytes:
 * services/domain/webhooks/signing.ts standardWebhooksKey).
 */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sealWebhookSecret(key: Buffer, secret: string): string {
  return seal(key, secret);
}

export function unsealWebhookSecret(key: Buffer, sealed: string): string {
  return unseal(key, sealed);
}
