import t from 'tap';
import { Kvm } from '@nats-io/kv';
import { createAuthenticator } from '../../services/roles/api/authenticator.js';
import { RevocationReplicator } from '../../services/control/oauth/housekeeping.js';
import { issueAccessToken } from '../../shared/auth/access-tokens.js';
import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { testInfra, waitUntil } from '../fixtures/env.js';
import {
  authorizeUrl,
  basicAuth,
  createUser,
  FormBrowser,
  postForm,
  registerClient,
  startOAuthServer,
} from '../fixtures/oauth.js';

/**
 * Revocation reaches every api process through the NATS KV revocation list, without any database
 * access at verification time. Here each authenticator is built on its own connections, as another
 * process would be.
 */
t.test('revocation list replicated through NATS KV', async (t) => {
  const { base, infra, config } = await startOAuthServer(t);
  const user = await createUser(infra);
  const app = await registerClient(infra, { redirectUris: ['https://app.example.com/cb'] });
  const auth = { authorization: basicAuth(app.clientId, app.clientSecret!) };
  const browser = new FormBrowser();
  const tokens = async () => {
    const cb = await browser.authorize(
      authorizeUrl(base, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: app.redirectUri,
        scope: 'write',
      }),
      user,
    );
    return (
      await postForm(
        `${base}/oauth/token`,
        { grant_type: 'authorization_code', code: cb.searchParams.get('code')!, redirect_uri: app.redirectUri },
        auth,
      )
    ).body;
  };
  const accepted = async (authenticator: Awaited<ReturnType<typeof createAuthenticator>>, token: string) => {
    try {
      await authenticator.authenticate(`Bearer ${token}`);
      return true;
    } catch {
      return false;
    }
  };

  t.test(
    'another process refuses a revoked token, cached or not, and one started later knows it at once',
    async (t) => {
      const otherProcess = await createAuthenticator(await testInfra(t, config, 'api-2'));
      const a = await tokens();
      const b = await tokens();
      t.ok(await accepted(otherProcess, a.access_token), 'accepted, and now cached');

      t.equal((await postForm(`${base}/oauth/revoke`, { token: a.access_token }, auth)).status, 200);
      await waitUntil(
        async () => !(await accepted(otherProcess, a.access_token)),
        'cached token refused after revocation',
        30_000,
      );
      t.pass('the cached token is refused');
      t.equal((await postForm(`${base}/oauth/revoke`, { token: b.refresh_token }, auth)).status, 200);
      await waitUntil(
        async () => !(await accepted(otherProcess, b.access_token)),
        'token of a revoked grant refused',
        30_000,
      );
      t.pass('an uncached token of the revoked grant is refused');

      const lateProcess = await createAuthenticator(await testInfra(t, config, 'api-3'));
      t.notOk(await accepted(lateProcess, a.access_token), 'a process started after the revocation refuses at once');
      t.notOk(await accepted(lateProcess, b.access_token));
      const c = await tokens();
      t.ok(await accepted(lateProcess, c.access_token), 'other tokens unaffected');
    },
  );

  t.test('housekeeping republishes revocations NATS did not get, and purges expired ones', async (t) => {
    const kv = await new Kvm(infra.nats).open(infra.natsNames.revocationBucket);
    const replicator = new RevocationReplicator(infra.pg, kv, infra.log);
    const authenticator = await createAuthenticator(await testInfra(t, config, 'api-4'));

    // A revocation recorded in Postgres whose publish failed (NATS was down at the time).
    const d = await tokens();
    t.ok(await accepted(authenticator, d.access_token));
    const jti = JSON.parse(Buffer.from(d.access_token.split('.')[1], 'base64url').toString()).jti;
    t.equal(
      (
        await infra.pg.query(
          'UPDATE oauth_access_tokens SET revoked_at = now() WHERE jti = $1 AND published_at IS NULL',
          [jti],
        )
      ).rowCount,
      1,
    );
    const pass = await replicator.housekeeping();
    t.ok(pass.published >= 1, `published ${pass.published}`);
    await waitUntil(
      async () => !(await accepted(authenticator, d.access_token)),
      'republished revocation applied',
      30_000,
    );
    t.ok(await kv.get(jti), 'in the bucket');

    // Once the token has expired its entry is purged from the bucket (and its row deleted).
    await infra.pg.query("UPDATE oauth_access_tokens SET expires_at = now() - interval '1 second' WHERE jti = $1", [
      jti,
    ]);
    const purge = await replicator.housekeeping();
    t.ok(purge.purged >= 1);
    const entry = await kv.get(jti);
    t.ok(entry === null || entry.operation !== 'PUT', 'no longer in the bucket');
    t.equal(
      (await infra.pg.query('SELECT count(*)::int AS n FROM oauth_access_tokens WHERE jti = $1', [jti])).rows[0].n,
      0,
    );
  });

  t.test('verification touches no database', async (t) => {
    const keys = new SigningKeys(infra.pg, infra.config.SECRET_KEY);
    await keys.load();
    const otherInfra = await testInfra(t, config, 'api-5');
    const authenticator = await createAuthenticator(otherInfra);
    await otherInfra.pg.end(); // from here on, any query would throw
    const token = (
      await issueAccessToken(
        keys,
        { accountId: user.accountId, userId: user.userId, clientId: app.clientId, scopes: ['read'] },
        { issuer: base, ttlSeconds: 600 },
      )
    ).token;
    const principal = await authenticator.authenticate(`Bearer ${token}`);
    t.equal(principal.accountId, user.accountId);
    t.same(await authenticator.authenticate(`Bearer ${token}`), principal, 'and again from the cache');
  });
});
