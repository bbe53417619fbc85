import { randomBytes } from 'node:crypto';
import { deriveKey, seal, unseal } from '../../../shared/secret.js';

/**
 * Webhook signing secrets are write-only for callers and sealed at rest (AES-256-GCM under a key derived
 * from SECRET_KEY): delivery needs the plaintext to sign, so a one-way hash would not do.
 */
export function webhookSecretKey(secretKey: Buffer): Buffer {
  return deriveKey(secretKey, 'webhook-secrets');
}

/** 32 random bytes, prefixed so people recognise it in their config (`whsec_…`, Stripe's convention). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function sealWebhookSecret(key: Buffer, secret: string): string {
  return seal(key, secret);
}

export function unsealWebhookSecret(key: Buffer, sealed: string): string {
  return unseal(key, sealed);
}
