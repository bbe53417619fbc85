import t from 'tap';
import { issueAccessToken, JwtAuthenticator, type RevocationList } from '../../shared/auth/access-tokens.js';
import { EphemeralKeys } from '../../shared/auth/signing-keys.js';
import { UnauthorizedError } from '../../shared/errors.js';

const ISSUER = 'https://meterline.example.com';
const claims = { accountId: 'acct_1', userId: 'usr_1', clientId: 'cli_1', scopes: ['read', 'write'] as const };

async function rejection(fn: () => unknown): Promise<UnauthorizedError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof UnauthorizedError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

t.test('JwtAuthenticator', async (t) => {
  const keys = await EphemeralKeys.generate();
  const revoked = new Set<string>();
  const list: RevocationList = { isRevoked: (jti) => revoked.has(jti) };
  const auth = new JwtAuthenticator(keys, ISSUER, list, 3);

  t.test('verifies and maps the claims to a principal', async (t) => {
    const issued = await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 600 });
    const p = await auth.authenticate(`Bearer ${issued.token}`);
    t.same(p, {
      accountId: 'acct_1',
      userId: 'usr_1',
      clientId: 'cli_1',
      scopes: ['read', 'write'],
      tokenId: issued.jti,
      expiresAt: issued.expiresAt,
    });
    const again = auth.authenticate(`Bearer ${issued.token}`);
    t.notOk(again instanceof Promise, 'a cached token answers synchronously');
    t.equal(again, p);
  });

  t.test('an operator user’s role travels in the token (docs/roles.md); none for a customer’s people', async (t) => {
    const billing = await issueAccessToken(keys, { ...claims, role: 'billing' }, { issuer: ISSUER, ttlSeconds: 600 });
    t.equal((await auth.authenticate(`Bearer ${billing.token}`)).role, 'billing');
    const none = await issueAccessToken(keys, { ...claims, role: null }, { issuer: ISSUER, ttlSeconds: 600 });
    t.notOk('role' in (await auth.authenticate(`Bearer ${none.token}`)), 'no role claim, no role');
    // A role this release doesn't know (a newer release's token) restricts the most: read-only.
    const newer = await issueAccessToken(
      keys,
      { ...claims, role: 'auditor' as never },
      { issuer: ISSUER, ttlSeconds: 600 },
    );
    t.equal((await auth.authenticate(`Bearer ${newer.token}`)).role, 'support');
  });

  t.test('the cache is bounded', async (t) => {
    const small = new JwtAuthenticator(keys, ISSUER, list, 3);
    for (let i = 0; i < 10; i++)
      await small.authenticate(
        `Bearer ${(await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 600 })).token}`,
      );
    t.equal(small.cacheSize, 3);
  });

  t.test('a cached token is refused once it expires or is revoked', async (t) => {
    let clock = Date.now();
    const timed = new JwtAuthenticator(keys, ISSUER, list, 10, () => clock);
    const shortLived = await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 60, now: clock });
    await timed.authenticate(`Bearer ${shortLived.token}`);
    clock += 59_000;
    t.ok(timed.authenticate(`Bearer ${shortLived.token}`), 'still valid from the cache a second before exp');
    clock += 1_000;
    t.match(
      (await rejection(() => timed.authenticate(`Bearer ${shortLived.token}`))).headers['WWW-Authenticate'],
      /error="invalid_token", error_description="The access token expired\."/,
    );
    t.match(
      (await rejection(() => timed.authenticate(`Bearer ${shortLived.token}`))).message,
      /expired/,
      'and after it left the cache',
    );
    const live = await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 600 });
    await auth.authenticate(`Bearer ${live.token}`);
    revoked.add(live.jti);
    t.match((await rejection(() => auth.authenticate(`Bearer ${live.token}`))).message, /revoked/);
    const fresh = new JwtAuthenticator(keys, ISSUER, list);
    t.match((await rejection(() => fresh.authenticate(`Bearer ${live.token}`))).message, /revoked/, 'uncached too');
  });

  t.test('verifiedAccount: the account of a cached, still valid token; nothing verified anew', async (t) => {
    let clock = Date.now();
    const timed = new JwtAuthenticator(keys, ISSUER, list, 10, () => clock);
    const token = await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 60, now: clock });
    const header = `Bearer ${token.token}`;
    t.equal(timed.verifiedAccount(header), undefined, 'not verified yet: unknown');
    await timed.authenticate(header);
    t.equal(timed.verifiedAccount(header), 'acct_1', 'verified before: its account');
    t.equal(timed.verifiedAccount(`${header.slice(0, -1)}x`), undefined, 'another header with the same tail');
    t.equal(timed.verifiedAccount(undefined), undefined, 'no header');
    clock += 60_000;
    t.equal(timed.verifiedAccount(header), undefined, 'expired');
    const live = await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 600, now: clock });
    await timed.authenticate(`Bearer ${live.token}`);
    revoked.add(live.jti);
    t.equal(timed.verifiedAccount(`Bearer ${live.token}`), undefined, 'revoked');
    // A revocation list that cannot be confirmed throws (503 at the authenticate step); verifiedAccount, called
    // as a request arrives, outside the pipeline's error mapping, must not.
    let stale = false;
    const watched = new JwtAuthenticator(
      keys,
      ISSUER,
      {
        isRevoked: (jti) => {
          if (stale) throw new Error('Token revocations cannot be confirmed right now');
          return revoked.has(jti);
        },
      },
      10,
      () => clock,
    );
    const later = await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 600, now: clock });
    await watched.authenticate(`Bearer ${later.token}`);
    stale = true;
    t.equal(watched.verifiedAccount(`Bearer ${later.token}`), undefined, 'revocations unconfirmed: not vouched for');
  });

  t.test('refuses expired, tampered, foreign and malformed tokens', async (t) => {
    const expired = await issueAccessToken(keys, claims, {
      issuer: ISSUER,
      ttlSeconds: 60,
      now: Date.now() - 3_600_000,
    });
    t.match((await rejection(() => auth.authenticate(`Bearer ${expired.token}`))).message, /expired/);
    const good = (await issueAccessToken(keys, claims, { issuer: ISSUER, ttlSeconds: 600 })).token;
    const [h, p, s] = good.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, scope: 'admin' })).toString('base64url');
    t.match((await rejection(() => auth.authenticate(`Bearer ${h}.${forged}.${s}`))).message, /invalid/);
    const other = await EphemeralKeys.generate(keys.signingKey().kid);
    t.match(
      (
        await rejection(async () =>
          auth.authenticate(
            `Bearer ${(await issueAccessToken(other, claims, { issuer: ISSUER, ttlSeconds: 600 })).token}`,
          ),
        )
      ).message,
      /invalid/,
    );
    // Signed by this deployment's key for another base URL (PUBLIC_BASE_URL differed): the detail names both.
    const foreign = await rejection(async () =>
      auth.authenticate(
        `Bearer ${(await issueAccessToken(keys, claims, { issuer: 'https://evil.example.com', ttlSeconds: 600 })).token}`,
      ),
    );
    t.equal(
      foreign.message,
      `The access token was issued for another server: issuer https://evil.example.com is not this server's (${ISSUER}).`,
    );
    t.match(foreign.headers['WWW-Authenticate'], /error="invalid_token"/);
    t.match((await rejection(() => auth.authenticate('Bearer abc'))).message, /malformed/);
    const missing = await rejection(() => auth.authenticate(undefined));
    t.equal(missing.headers['WWW-Authenticate'], 'Bearer realm="meterline"');
    t.equal(
      (await rejection(() => auth.authenticate('Basic Zm9vOmJhcg=='))).headers['WWW-Authenticate'],
      'Bearer realm="meterline"',
    );
    t.match(
      (await rejection(() => auth.authenticate('Bearer'))).headers['WWW-Authenticate'],
      /error="invalid_request"/,
    );
  });
});
