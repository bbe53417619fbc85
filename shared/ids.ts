import { randomBytes } from 'node:crypto';

export type IdPrefix =
  | 'acct'
  | 'cus'
  | 'usr'
  | 'cli'
  | 'prod'
  | 'mtr'
  | 'use'
  | 'inv'
  | 'pm'
  | 'sub'
  | 'wh'
  | 'evt'
  | 'whd'
  | 'grt'
  | 'key'
  | 'tok'
  | 'cred'
  | 'cn'
  | 'corr'
  | 'clock'
  | 'txr'
  | 'ent'
  | 'entg'
  | 'alrt'
  | 'plan'
  | 'coupon'
  | 'exp'
  | 'exps'
  | 'hcl'
  | 'promo'
  | 'cs'
  | 'pts'
  | 'ctu';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `prod_` + 22 base62 characters (≈131 bits of randomness). */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(22);
  let out = prefix + '_';
  for (let i = 0; i < 22; i++) out += ALPHABET[bytes[i]! % 62];
  return out;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(prefix + '_') && id.length <= 64;
}
