import { generateKeyPair, exportJWK, importJWK, type JWK, type CryptoKey } from 'jose';
import { withTransaction, type PgPool } from '../clients/postgres.js';
import { deriveKey, seal, unseal } from '../secret.js';
import { newId } from '../ids.js';

export const JWT_ALG = 'EdDSA';
/** How long a published key set is served from memory; a future key rotation publishes a key this long before signing with it. */
const JWKS_TTL_MS = 60_000;
const SELECT_KEYS =
  'SELECT kid, public_jwk, sealed_private_jwk FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid';

export interface ActiveKey {
  kid: string;
  privateKey: CryptoKey;
}

/**
 * Ed25519 token signing keys kept in Postgres, the private half sealed with a key derived from
 * SECRET_KEY. Verifiers hold the public keys in memory; an unknown `kid` triggers a (rate-limited) reload.
 */
export class SigningKeys {
  private publicKeys = new Map<string, CryptoKey>();
  private active: ActiveKey | undefined;
  private lastReload = 0;
  private jwksCache: { at: number; keys: Promise<JWK[]> } | undefined;
  private readonly sealKey: Buffer;

  constructor(
    private readonly pg: PgPool,
    secret: Buffer,
  ) {
    this.sealKey = deriveKey(secret, 'signing-keys');
  }

  /** Loads every non-retired key; creates the first one when none exists. */
  async load(): Promise<void> {
    let rows = (await this.pg.query<{ kid: string; public_jwk: JWK; sealed_private_jwk: string }>(SELECT_KEYS)).rows;
    if (rows.length === 0) rows = await this.createFirst();
    const keys = new Map<string, CryptoKey>();
    for (const row of rows) keys.set(row.kid, (await importJWK(row.public_jwk, JWT_ALG)) as CryptoKey);
    this.publicKeys = keys;
    const newest = rows[0]!;
    if (this.active?.kid !== newest.kid) {
      const jwk = JSON.parse(unseal(this.sealKey, newest.sealed_private_jwk)) as JWK;
      this.active = { kid: newest.kid, privateKey: (await importJWK(jwk, JWT_ALG)) as CryptoKey };
    }
    this.lastReload = Date.now();
  }

  /**
   * The first key, created once however many processes start together: under a transaction lock, the second
   * finds the first's key instead of adding its own. Two first keys made one api process sign with a key another
   * loaded too early to know, and for a second (the reload limit) it answered 401 to tokens of the other
   * (cluster-faults, a cluster started from an empty database).
   */
  private async createFirst(): Promise<{ kid: string; public_jwk: JWK; sealed_private_jwk: string }[]> {
    return withTransaction(this.pg, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['signing-keys:first']);
      const existing = await client.query<{ kid: string; public_jwk: JWK; sealed_private_jwk: string }>(SELECT_KEYS);
      if (existing.rows.length) return existing.rows;
      const { publicKey, privateKey } = await generateKeyPair(JWT_ALG, { crv: 'Ed25519', extractable: true });
      const kid = newId('key');
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: JWT_ALG, use: 'sig' };
      const sealed = seal(this.sealKey, JSON.stringify(await exportJWK(privateKey)));
      await client.query('INSERT INTO signing_keys (kid, public_jwk, sealed_private_jwk) VALUES ($1, $2, $3)', [
        kid,
        publicJwk,
        sealed,
      ]);
      return (await client.query<{ kid: string; public_jwk: JWK; sealed_private_jwk: string }>(SELECT_KEYS)).rows;
    });
  }

  signingKey(): ActiveKey {
    if (!this.active) throw new Error('signing keys not loaded');
    return this.active;
  }

  /** The public key for `kid`; reloads at most once a second when it is unknown. */
  async publicKey(kid: string): Promise<CryptoKey | undefined> {
    const key = this.publicKeys.get(kid);
    if (key || Date.now() - this.lastReload < 1000) return key;
    await this.load();
    return this.publicKeys.get(kid);
  }

  /**
   * The published key set, from memory: the endpoint is unauthenticated, so a request must not cost a
   * Postgres query. Re-read at most once per JWKS_TTL_MS, one read shared by concurrent callers.
   */
  async jwks(): Promise<{ keys: JWK[] }> {
    if (!this.jwksCache || Date.now() - this.jwksCache.at > JWKS_TTL_MS) {
      this.jwksCache = {
        at: Date.now(),
        keys: this.pg
          .query<{ public_jwk: JWK }>(
            'SELECT public_jwk FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC',
          )
          .then((r) => r.rows.map((row) => row.public_jwk)),
      };
      this.jwksCache.keys.catch(() => (this.jwksCache = undefined));
    }
    return { keys: await this.jwksCache.keys };
  }
}

/**
 * One in-memory Ed25519 key that both signs and verifies: for benchmarks and unit tests that exercise
 * token handling without Postgres. Production keys always come from SigningKeys.
 */
export class EphemeralKeys {
  private constructor(
    private readonly active: ActiveKey,
    private readonly verifyKey: CryptoKey,
  ) {}

  static async generate(kid = newId('key')): Promise<EphemeralKeys> {
    const { publicKey, privateKey } = await generateKeyPair(JWT_ALG, { crv: 'Ed25519' });
    return new EphemeralKeys({ kid, privateKey }, publicKey);
  }

  signingKey(): ActiveKey {
    return this.active;
  }

  publicKey(kid: string): CryptoKey | undefined {
    return kid === this.active.kid ? this.verifyKey : undefined;
  }
}
