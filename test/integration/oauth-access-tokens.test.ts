import t from 'tap';
import { SignJWT, base64url } from 'jose';
import { SigningKeys, EphemeralKeys } from '../../shared/auth/signing-keys.js';
import { issueAccessToken } from '../../shared/auth/access-tokens.js';
import { createTestAccount } from '../fixtures/auth.js';
import { createUser, startOAuthServer } from '../fixtures/oauth.js';

/**
 * Bearer tokens at a protected route (RFC 6750 §3): 401 with a challenge for missing, malformed,
 * expired, tampered or foreign tokens; 403 insufficient_scope naming the scope; nesting of scopes.
 */
t.test('access tokens at the API', async (t) => {
  const { base, infra } = await startOAuthServer(t);
  const user = await createUser(infra);
  const keys = new SigningKeys(infra.pg, infra.config.SECRET_KEY);
  await keys.load();
  const kid = keys.signingKey().kid;
  const claims = { accountId: user.accountId, userId: user.userId, clientId: 'cli_test', scopes: ['read'] as const };
  const issue = (
    o: { scopes?: readonly ('read' | 'write' | 'admin')[]; now?: number; issuer?: string; ttl?: number } = {},
  ) =>
    issueAccessToken(
      keys,
      { ...claims, scopes: o.scopes ?? claims.scopes },
      { issuer: o.issuer ?? base, ttlSeconds: o.ttl ?? 3600, now: o.now },
    ).then((x) => x.token);
  const call = async (authorization: string | undefined, scope = 'read') => {
    const res = await fetch(`${base}/v1/oauth-probe/${scope}`, {
      headers: authorization === undefined ? {} : { authorization },
    });
    return { status: res.status, challenge: res.headers.get('www-authenticate'), body: (await res.json()) as any };
  };
  const invalid = (
    t: Tap,
    r: { status: number; challenge: string | null; body: any },
    description: RegExp,
    name: string,
  ) => {
    t.equal(r.status, 401, name);
    t.match(r.challenge, /^Bearer realm="meterline", error="invalid_token", error_description="[^"]*"$/, name);
    t.match(r.challenge, description, name);
    t.equal(r.body.code, 'unauthorized', name);
  };
  type Tap = typeof t;

  t.test('a valid token works; scopes nest admin ⊇ write ⊇ read', async (t) => {
    t.equal((await call(`Bearer ${await issue()}`)).status, 200);
    t.equal((await call(`bearer ${await issue()}`)).status, 200, 'the scheme is case-insensitive');
    const write = `Bearer ${await issue({ scopes: ['write'] })}`;
    t.equal((await call(write, 'read')).status, 200, 'write covers read');
    t.equal((await call(write, 'write')).status, 200);
    const admin = `Bearer ${await issue({ scopes: ['admin'] })}`;
    for (const s of ['read', 'write', 'admin']) t.equal((await call(admin, s)).status, 200, `admin covers ${s}`);
    const read = `Bearer ${await issue()}`;
    for (const s of ['write', 'admin']) {
      const r = await call(read, s);
      t.equal(r.status, 403, `read does not cover ${s}`);
      t.equal(r.challenge, `Bearer realm="meterline", error="insufficient_scope", scope="${s}"`);
      t.equal(r.body.code, 'insufficient_scope');
    }
  });

  t.test('missing or non-bearer credentials: a bare challenge (RFC 6750 §3.1)', async (t) => {
    for (const [name, header] of [
      ['no header', undefined],
      ['Basic', 'Basic dXNlcjpwYXNz'],
      ['just a token', await issue()],
    ] as const) {
      const r = await call(header);
      t.equal(r.status, 401, name);
      t.equal(r.challenge, 'Bearer realm="meterline"', name);
    }
    const empty = await call('Bearer ');
    t.equal(empty.status, 401);
    t.match(empty.challenge, /error="invalid_request"/);
  });

  t.test('expired', async (t) => {
    invalid(t, await call(`Bearer ${await issue({ now: Date.now() - 7200_000 })}`), /expired/, 'expired an hour ago');
    invalid(
      t,
      await call(`Bearer ${await issue({ now: Date.now() - 61_000, ttl: 60 })}`),
      /expired/,
      'expired a second ago',
    );
  });

  t.test('tampered', async (t) => {
    const token = await issue();
    const [h, p, s] = token.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const reencode = (o: unknown) => base64url.encode(JSON.stringify(o));
    invalid(
      t,
      await call(`Bearer ${h}.${reencode({ ...payload, scope: 'admin' })}.${s}`),
      /invalid/,
      'scope raised to admin',
    );
    invalid(
      t,
      await call(`Bearer ${h}.${reencode({ ...payload, sub: 'acct_someoneelse' })}.${s}`),
      /invalid/,
      'another account',
    );
    invalid(
      t,
      await call(`Bearer ${h}.${reencode({ ...payload, exp: payload.exp + 86400 })}.${s}`),
      /invalid/,
      'lifetime extended',
    );
    const flipped = s!.slice(0, 10) + (s![10] === 'A' ? 'B' : 'A') + s!.slice(11);
    invalid(t, await call(`Bearer ${h}.${p}.${flipped}`), /invalid/, 'signature altered');
    invalid(t, await call(`Bearer ${h}.${p}.`), /invalid/, 'signature removed');
    invalid(t, await call(`Bearer ${reencode({ alg: 'none', typ: 'at+jwt', kid })}.${p}.`), /invalid/, 'alg none');
    invalid(t, await call('Bearer not-a-jwt'), /malformed/, 'garbage');
  });

  t.test('foreign tokens', async (t) => {
    const impostor = await EphemeralKeys.generate(kid); // same kid, different key
    invalid(
      t,
      await call(`Bearer ${(await issueAccessToken(impostor, claims, { issuer: base, ttlSeconds: 600 })).token}`),
      /invalid/,
      'same kid, another key',
    );
    const unknown = await EphemeralKeys.generate();
    invalid(
      t,
      await call(`Bearer ${(await issueAccessToken(unknown, claims, { issuer: base, ttlSeconds: 600 })).token}`),
      /not signed by a known key/,
      'unknown kid',
    );
    invalid(
      t,
      await call(`Bearer ${await issue({ issuer: 'https://other.example.com' })}`),
      /invalid/,
      'another issuer',
    );
    const { privateKey } = keys.signingKey();
    const now = Math.floor(Date.now() / 1000);
    const custom = (header: Record<string, unknown>, body: Record<string, unknown>) =>
      new SignJWT({ uid: user.userId, client_id: 'cli_test', scope: 'read', ...body })
        .setProtectedHeader({ alg: 'EdDSA', kid, ...header })
        .setIssuer(base)
        .setSubject(user.accountId)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .setJti('j1')
        .sign(privateKey);
    t.equal(
      (await call(`Bearer ${await custom({ typ: 'at+jwt' }, { aud: base })}`)).status,
      200,
      'the control token is accepted',
    );
    invalid(
      t,
      await call(`Bearer ${await custom({ typ: 'at+jwt' }, { aud: 'https://another-api.example.com' })}`),
      /invalid/,
      'another audience',
    );
    invalid(
      t,
      await call(`Bearer ${await custom({ typ: 'JWT' }, { aud: base })}`),
      /invalid/,
      'not an access token (typ JWT)',
    );
    const hs = await new SignJWT({ uid: user.userId, client_id: 'cli_test', scope: 'admin', aud: base })
      .setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' })
      .setIssuer(base)
      .setSubject(user.accountId)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .setJti('j2')
      .sign(new TextEncoder().encode('a'.repeat(32)));
    invalid(t, await call(`Bearer ${hs}`), /invalid/, 'HS256 (algorithm confusion)');
  });

  t.test("the shared fixture's tokens still work (createTestAccount)", async (t) => {
    const acct = await createTestAccount(infra);
    t.equal((await call(acct.auth.read.authorization, 'read')).status, 200);
    t.equal((await call(acct.auth.write.authorization, 'write')).status, 200);
    t.equal((await call(acct.auth.admin.authorization, 'admin')).status, 403, 'non-operators get write for admin');
    const op = await createTestAccount(infra, { operator: true });
    t.equal((await call(op.auth.admin.authorization, 'admin')).status, 200);
  });
});
