import t, { type Test } from 'tap';
import { waitUntil } from '../fixtures/env.js';
import {
  authorizeUrl,
  basicAuth,
  CHALLENGE,
  createUser,
  FormBrowser,
  postForm,
  postJson,
  registerClient,
  startOAuthServer,
  VERIFIER,
  type RegisteredClient,
} from '../fixtures/oauth.js';

/** Token and revocation endpoint failures (RFC 6749 §4.1.3, §5.2, §6, §10.4; RFC 7636 §4.6; RFC 7009; RFC 9700 §4.14). */
t.test('token endpoint failures', async (t) => {
  const { base, infra } = await startOAuthServer(t);
  const user = await createUser(infra);
  const app = await registerClient(infra, {
    name: 'App A',
    redirectUris: ['https://a.example.com/cb', 'https://a.example.com/other'],
  });
  const other = await registerClient(infra, { name: 'App B', redirectUris: ['https://b.example.com/cb'] });
  const spa = await registerClient(infra, { isPublic: true, redirectUris: ['http://127.0.0.1:7777/cb'] });
  const browser = new FormBrowser();
  const tokenUrl = `${base}/oauth/token`;
  const revokeUrl = `${base}/oauth/revoke`;
  const authA = { authorization: basicAuth(app.clientId, app.clientSecret!) };
  const authB = { authorization: basicAuth(other.clientId, other.clientSecret!) };

  /** A fresh code from the (signed-in) browser. */
  async function code(client: RegisteredClient, extra: Record<string, string> = {}): Promise<string> {
    const callback = await browser.authorize(
      authorizeUrl(base, {
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: client.redirectUri,
        scope: 'read write',
        ...extra,
      }),
      user,
    );
    const c = callback.searchParams.get('code');
    if (!c) throw new Error(`no code: ${callback}`);
    return c;
  }
  const exchange = (c: string, params: Record<string, string> = {}, headers: Record<string, string> = authA) =>
    postForm(
      tokenUrl,
      { grant_type: 'authorization_code', code: c, redirect_uri: app.redirectUri, ...params },
      headers,
    );
  const probe = (token: string) =>
    fetch(`${base}/v1/oauth-probe/read`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

  /** RFC 6749 §5.2: exactly {error, error_description}, never cached. */
  function isOAuthError(
    t: Test,
    res: { status: number; headers: Headers; body: any },
    status: number,
    error: string,
    description?: RegExp,
  ) {
    t.equal(res.status, status, `${error}: status`);
    t.same(Object.keys(res.body ?? {}).sort(), ['error', 'error_description']);
    t.equal(res.body?.error, error);
    if (description) t.match(res.body?.error_description, description);
    t.equal(res.headers.get('cache-control'), 'no-store');
    t.match(res.headers.get('content-type'), /^application\/json/);
  }

  t.test('a replayed code fails and revokes what its first use issued', async (t) => {
    const c = await code(app);
    const first = await exchange(c);
    t.equal(first.status, 200);
    t.equal(await probe(first.body.access_token), 200);
    isOAuthError(t, await exchange(c), 400, 'invalid_grant', /already used; the tokens issued for it are revoked/);
    await waitUntil(
      async () => (await probe(first.body.access_token)) === 401,
      'access token of the replayed code refused',
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, authA),
      400,
      'invalid_grant',
      /revoked/,
    );
    const grant = await infra.pg.query(
      'SELECT revoked_reason FROM oauth_grants g JOIN oauth_authorization_codes c ON c.grant_id = g.id WHERE c.client_id = $1 AND c.redeemed_at IS NOT NULL AND g.revoked_at IS NOT NULL',
      [app.clientId],
    );
    t.same(
      grant.rows.map((r) => r.revoked_reason),
      ['code_replay'],
    );
  });

  t.test('two simultaneous redemptions: one wins, and the replay revokes its tokens', async (t) => {
    const c = await code(app);
    const results = await Promise.all([exchange(c), exchange(c)]);
    t.same(results.map((r) => r.status).sort(), [200, 400]);
    const winner = results.find((r) => r.status === 200)!;
    await waitUntil(async () => (await probe(winner.body.access_token)) === 401, 'winner revoked');
  });

  t.test('codes live at most 60 s', async (t) => {
    const c = await code(app);
    const { rows } = await infra.pg.query(
      'SELECT extract(epoch FROM expires_at - created_at) AS ttl FROM oauth_authorization_codes WHERE redeemed_at IS NULL',
    );
    t.ok(rows.length >= 1);
    for (const r of rows) t.equal(Number(r.ttl), 60);
    // 61 seconds later:
    await infra.pg.query(
      "UPDATE oauth_authorization_codes SET created_at = created_at - interval '61 seconds', expires_at = expires_at - interval '61 seconds' WHERE redeemed_at IS NULL",
    );
    isOAuthError(t, await exchange(c), 400, 'invalid_grant', /expired/);
    await t.rejects(
      infra.pg.query("UPDATE oauth_authorization_codes SET expires_at = created_at + interval '61 seconds'"),
      /check constraint/,
      'the database refuses longer-lived codes',
    );
  });

  t.test('a code is bound to its client', async (t) => {
    const c = await code(app);
    isOAuthError(
      t,
      await exchange(c, { redirect_uri: app.redirectUri }, authB),
      400,
      'invalid_grant',
      /another client/,
    );
    isOAuthError(t, await exchange(c), 400, 'invalid_grant', /already used/);
  });

  t.test('a code is bound to its redirect URI', async (t) => {
    isOAuthError(
      t,
      await exchange(await code(app), { redirect_uri: 'https://a.example.com/other' }),
      400,
      'invalid_grant',
      /redirect_uri does not match/,
    );
    const c = await code(app);
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'authorization_code', code: c }, authA),
      400,
      'invalid_grant',
      /redirect_uri does not match/,
    );
  });

  t.test('a code is bound to its PKCE challenge', async (t) => {
    const pkce = { code_challenge: CHALLENGE, code_challenge_method: 'S256' };
    isOAuthError(t, await exchange(await code(app, pkce)), 400, 'invalid_grant', /code_verifier is required/);
    isOAuthError(
      t,
      await exchange(await code(app, pkce), { code_verifier: 'x'.repeat(43) }),
      400,
      'invalid_grant',
      /does not match the code_challenge/,
    );
    isOAuthError(
      t,
      await exchange(await code(app, pkce), { code_verifier: 'short' }),
      400,
      'invalid_grant',
      /43–128 characters/,
    );
    // RFC 9700 §2.1.1: a verifier for a code issued without a challenge (PKCE downgrade).
    isOAuthError(
      t,
      await exchange(await code(app), { code_verifier: VERIFIER }),
      400,
      'invalid_grant',
      /carried no code_challenge/,
    );
    const ok = await exchange(await code(app, pkce), { code_verifier: VERIFIER });
    t.equal(ok.status, 200);
  });

  t.test('client authentication failures → 401 invalid_client', async (t) => {
    const c = await code(app);
    const params = { grant_type: 'authorization_code', code: c, redirect_uri: app.redirectUri };
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ['wrong secret, Basic', params, { authorization: basicAuth(app.clientId, 'wrong') }],
      ["another client's secret, Basic", params, { authorization: basicAuth(app.clientId, other.clientSecret!) }],
      ['unknown client, Basic', params, { authorization: basicAuth('cli_nope', 'x') }],
      ['malformed Basic', params, { authorization: 'Basic !!!' }],
      ['Basic without a colon', params, { authorization: `Basic ${Buffer.from('justid').toString('base64')}` }],
      ['Bearer is not client authentication', params, { authorization: 'Bearer abc' }],
      ['wrong secret in the body', { ...params, client_id: app.clientId, client_secret: 'wrong' }, {}],
      ['confidential client without a secret', { ...params, client_id: app.clientId }, {}],
      ['unknown client_id', { ...params, client_id: 'cli_nope' }, {}],
      ['no client authentication at all', params, {}],
      ['a public client sending a secret', { ...params, client_id: spa.clientId, client_secret: 'anything' }, {}],
      ['a public client using Basic', params, { authorization: basicAuth(spa.clientId, '') }],
    ];
    for (const [name, body, headers] of cases) {
      const res = await postForm(tokenUrl, body, headers);
      isOAuthError(t, res, 401, 'invalid_client');
      t.equal(res.headers.get('www-authenticate'), 'Basic realm="meterline", charset="UTF-8"', name);
    }
    isOAuthError(
      t,
      await postForm(tokenUrl, { ...params, client_secret: app.clientSecret! }, authA),
      400,
      'invalid_request',
      /one client authentication method/,
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { ...params, client_id: other.clientId }, authA),
      400,
      'invalid_request',
      /differs from the authenticated client/,
    );
    // None of that consumed the code.
    t.equal((await exchange(c)).status, 200);
  });

  t.test('malformed token requests', async (t) => {
    isOAuthError(t, await postForm(tokenUrl, { code: 'x' }, authA), 400, 'invalid_request', /"grant_type" is required/);
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'password', username: 'u', password: 'p' }, authA),
      400,
      'unsupported_grant_type',
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'client_credentials' }, authA),
      400,
      'unsupported_grant_type',
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'authorization_code' }, authA),
      400,
      'invalid_request',
      /"code" is required/,
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'refresh_token' }, authA),
      400,
      'invalid_request',
      /"refresh_token" is required/,
    );
    isOAuthError(
      t,
      await postForm(
        tokenUrl,
        { grant_type: 'authorization_code', code: 'never-issued', redirect_uri: app.redirectUri },
        authA,
      ),
      400,
      'invalid_grant',
      /invalid/,
    );
    isOAuthError(
      t,
      await postJson(tokenUrl, { grant_type: 'authorization_code', code: 42 }, authA),
      400,
      'invalid_request',
      /"code" must be a string/,
    );
    isOAuthError(t, await postJson(tokenUrl, ['grant_type'], authA), 400, 'invalid_request', /must be an object/);
    const repeated = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...authA },
      body: 'grant_type=refresh_token&refresh_token=a&refresh_token=b',
    });
    isOAuthError(
      t,
      { status: repeated.status, headers: repeated.headers, body: await repeated.json() },
      400,
      'invalid_request',
      /"refresh_token" is repeated/,
    );
    const empty = await fetch(tokenUrl, { method: 'POST', headers: authA });
    isOAuthError(
      t,
      { status: empty.status, headers: empty.headers, body: await empty.json() },
      400,
      'invalid_request',
      /body is empty/,
    );
    const text = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...authA },
      body: 'grant_type=x',
    });
    t.equal(text.status, 415);
    const get = await fetch(tokenUrl);
    t.equal(get.status, 405);
    t.equal(get.headers.get('allow'), 'POST');
  });

  t.test('refresh tokens: rotation, reuse detection, binding, scope, expiry', async (t) => {
    const first = await exchange(await code(app));
    const second = await postForm(
      tokenUrl,
      { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
      authA,
    );
    t.equal(second.status, 200);
    const { rows: lineage } = await infra.pg.query(
      'SELECT child.parent_id = parent.id AS linked, parent.rotated_at IS NOT NULL AS rotated FROM oauth_refresh_tokens child JOIN oauth_refresh_tokens parent ON parent.id = child.parent_id WHERE child.grant_id = parent.grant_id',
    );
    t.ok(
      lineage.some((r) => r.linked && r.rotated),
      'the new token records its parent, which is marked rotated',
    );

    // The old one again: someone else has it. The whole grant goes, including the newest tokens.
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, authA),
      400,
      'invalid_grant',
      /already used; the grant is revoked/,
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token }, authA),
      400,
      'invalid_grant',
      /revoked/,
    );
    await waitUntil(
      async () => (await probe(second.body.access_token)) === 401 && (await probe(first.body.access_token)) === 401,
      'access tokens of the grant refused',
    );

    const fresh = await exchange(await code(app));
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: fresh.body.refresh_token }, authB),
      400,
      'invalid_grant',
      /another client/,
    );
    isOAuthError(
      t,
      await postForm(
        tokenUrl,
        { grant_type: 'refresh_token', refresh_token: fresh.body.refresh_token, scope: 'read write admin' },
        authA,
      ),
      400,
      'invalid_scope',
      /"admin" exceeds/,
    );
    isOAuthError(
      t,
      await postForm(
        tokenUrl,
        { grant_type: 'refresh_token', refresh_token: fresh.body.refresh_token, scope: 'root' },
        authA,
      ),
      400,
      'invalid_scope',
      /Unknown scope/,
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: 'not-a-token' }, authA),
      400,
      'invalid_grant',
    );
    // Failed attempts did not rotate it; expiry does end it.
    await infra.pg.query(
      "UPDATE oauth_refresh_tokens SET expires_at = now() - interval '1 second' WHERE rotated_at IS NULL AND revoked_at IS NULL",
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: fresh.body.refresh_token }, authA),
      400,
      'invalid_grant',
      /expired/,
    );
  });

  t.test('revocation endpoint (RFC 7009)', async (t) => {
    const tokens = await exchange(await code(app));
    isOAuthError(
      t,
      await postForm(revokeUrl, { token_type_hint: 'refresh_token' }, authA),
      400,
      'invalid_request',
      /"token" is required/,
    );
    isOAuthError(t, await postForm(revokeUrl, {}, authA), 400, 'invalid_request', /body is empty/);
    isOAuthError(t, await postForm(revokeUrl, { token: tokens.body.refresh_token }), 401, 'invalid_client');
    isOAuthError(
      t,
      await postForm(
        revokeUrl,
        { token: tokens.body.refresh_token },
        { authorization: basicAuth(app.clientId, 'wrong') },
      ),
      401,
      'invalid_client',
    );
    isOAuthError(
      t,
      await postForm(revokeUrl, { token: tokens.body.refresh_token }, authB),
      400,
      'unauthorized_client',
      /another client/,
    );
    isOAuthError(
      t,
      await postForm(revokeUrl, { token: tokens.body.access_token }, authB),
      400,
      'unauthorized_client',
      /another client/,
    );
    t.equal(await probe(tokens.body.access_token), 200, "another client's attempt revoked nothing");

    for (const token of ['unknown-token', 'a.b.c', 'eyJhbGciOiJub25lIn0.eyJqdGkiOiJ4In0.']) {
      const res = await postForm(revokeUrl, { token }, authA);
      t.equal(res.status, 200, `unknown token ${token} → 200`);
      t.equal(res.body, null);
    }
    const unknownHint = await postForm(
      revokeUrl,
      { token: tokens.body.access_token, token_type_hint: 'something_else' },
      authA,
    );
    t.equal(unknownHint.status, 200, 'an unknown hint is ignored, the token still found');
    await waitUntil(async () => (await probe(tokens.body.access_token)) === 401, 'revoked access token refused');
    // Revoking twice is fine.
    t.equal((await postForm(revokeUrl, { token: tokens.body.access_token }, authA)).status, 200);
    t.equal(
      (
        await postJson(
          revokeUrl,
          { token: tokens.body.refresh_token, client_id: app.clientId, client_secret: app.clientSecret },
          {},
        )
      ).status,
      200,
      'JSON and client_secret_post',
    );
    isOAuthError(
      t,
      await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token }, authA),
      400,
      'invalid_grant',
    );
  });
});
