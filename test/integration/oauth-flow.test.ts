import t from 'tap';
import { waitUntil } from '../fixtures/env.js';
import {
  authorizeUrl,
  basicAuth,
  CHALLENGE,
  createUser,
  FormBrowser,
  parseForm,
  postForm,
  postJson,
  registerClient,
  startOAuthServer,
  VERIFIER,
} from '../fixtures/oauth.js';

/** The authorization-code flow driven the way a browser drives it: HTML forms, cookies, redirects. */
t.test('OAuth authorization code flow through the HTML pages', async (t) => {
  const { base, infra } = await startOAuthServer(t);
  const user = await createUser(infra);
  const operator = await createUser(infra, { operator: true });
  const app = await registerClient(infra, {
    name: 'Acme <Reports>',
    redirectUris: ['https://app.example.com/callback?tenant=1', 'http://127.0.0.1:8765/cb'],
  });

  t.test('discovery document (RFC 8414) names every endpoint and capability', async (t) => {
    const res = await fetch(`${base}/.well-known/oauth-authorization-server`);
    t.equal(res.status, 200);
    const meta = await (res.json() as Promise<any>);
    t.same(meta, {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      jwks_uri: `${base}/oauth/jwks`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['read', 'write', 'admin'],
      authorization_response_iss_parameter_supported: true,
    });
    const jwks = (await (await fetch(meta.jwks_uri)).json()) as any;
    t.equal(jwks.keys.length, 1);
    t.match(jwks.keys[0], { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', kid: /^key_/ });
    t.notOk('d' in jwks.keys[0], 'no private part');
  });

  t.test('sign-in page, consent page, code, tokens, API call, refresh, revocation', async (t) => {
    const browser = new FormBrowser();
    const url = authorizeUrl(base, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'read write',
      state: 'st-123',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    });

    const signIn = await browser.open(url);
    t.equal(signIn.status, 200);
    t.match(signIn.headers.get('content-type'), /^text\/html; charset=utf-8/);
    t.equal(signIn.headers.get('cache-control'), 'no-store');
    t.match(signIn.headers.get('content-security-policy'), /frame-ancestors 'none'/);
    t.equal(signIn.headers.get('x-frame-options'), 'DENY');
    t.match(signIn.html, /<form method="post">/);
    t.match(signIn.html, /Acme &lt;Reports&gt;/, 'client name shown, escaped');
    const form = parseForm(signIn.html)!;
    t.same(Object.keys(form.fields).sort(), ['csrf_token', 'email', 'password']);
    t.match(form.fields.csrf_token, /^[A-Za-z0-9_-]{43}$/);
    t.equal(browser.setCookies.length, 1);
    t.match(browser.setCookies[0], /^meterline_session=[A-Za-z0-9_-]{43}; Path=\/oauth; HttpOnly; SameSite=Lax$/);
    const anonymousCookie = browser.cookies.get('meterline_session');

    const signedIn = await browser.submit(signIn, { email: user.email.toUpperCase(), password: user.password });
    t.equal(signedIn.status, 303, 'Post/Redirect/Get after sign-in');
    t.equal(signedIn.headers.get('location'), new URL(url).pathname + new URL(url).search);
    t.match(
      browser.setCookies[1],
      /^meterline_session=[A-Za-z0-9_-]{43}; Path=\/oauth; HttpOnly; SameSite=Lax; Max-Age=28800$/,
    );
    t.not(browser.cookies.get('meterline_session'), anonymousCookie, 'a new session id after sign-in (no fixation)');

    const consent = await browser.open(new URL(signedIn.headers.get('location')!, base).toString());
    t.equal(consent.status, 200);
    t.match(consent.html, /Acme &lt;Reports&gt; wants to access your meterline account/);
    t.match(consent.html, new RegExp(`Signed in as <strong>${user.email.replace(/\./g, '\\.')}</strong>`));
    t.match(consent.html, /<strong>read<\/strong>/);
    t.match(consent.html, /<strong>write<\/strong>/);
    t.notMatch(consent.html, /<strong>admin<\/strong>/);
    t.match(consent.html, /<button name="decision" value="approve">/);
    t.match(consent.html, /<button name="decision" value="deny">/);

    const approved = await browser.submit(consent, {}, { name: 'decision', value: 'approve' });
    t.equal(approved.status, 302);
    const callback = new URL(approved.headers.get('location')!);
    t.equal(`${callback.origin}${callback.pathname}`, 'https://app.example.com/callback');
    t.equal(callback.searchParams.get('tenant'), '1', 'the registered query is kept');
    t.match(callback.searchParams.get('code'), /^[A-Za-z0-9_-]{43}$/);
    t.equal(callback.searchParams.get('state'), 'st-123');
    t.equal(callback.searchParams.get('iss'), base, 'RFC 9207 iss');

    // Seed shape: JSON body with client_secret.
    const exchanged = await postJson(`${base}/oauth/token`, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code'),
      redirect_uri: app.redirectUri,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      code_verifier: VERIFIER,
    });
    t.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
    t.equal(exchanged.headers.get('cache-control'), 'no-store');
    t.equal(exchanged.headers.get('pragma'), 'no-cache');
    t.match(exchanged.headers.get('content-type'), /^application\/json/);
    t.same(Object.keys(exchanged.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    t.match(exchanged.body, { token_type: 'Bearer', expires_in: 3600, scope: 'read write' });
    const [header, payload] = (exchanged.body.access_token as string)
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    t.match(header, { alg: 'EdDSA', typ: 'at+jwt', kid: /^key_/ });
    t.match(payload, {
      iss: base,
      aud: base,
      sub: user.accountId,
      uid: user.userId,
      client_id: app.clientId,
      scope: 'read write',
      jti: String,
    });
    t.equal(payload.exp - payload.iat, 3600);

    const bearer = { authorization: `Bearer ${exchanged.body.access_token}` };
    const probe = await fetch(`${base}/v1/oauth-probe/write`, { headers: bearer });
    t.equal(probe.status, 200);
    t.match(await probe.json(), {
      accountId: user.accountId,
      userId: user.userId,
      clientId: app.clientId,
      scopes: ['read', 'write'],
    });
    const admin = await fetch(`${base}/v1/oauth-probe/admin`, { headers: bearer });
    t.equal(admin.status, 403);
    t.equal(
      admin.headers.get('www-authenticate'),
      'Bearer realm="meterline", error="insufficient_scope", scope="admin"',
    );

    // RFC 6749 form encoding + HTTP Basic, narrowing the scope of the new access token.
    const refreshed = await postForm(
      `${base}/oauth/token`,
      { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token, scope: 'read' },
      { authorization: basicAuth(app.clientId, app.clientSecret!) },
    );
    t.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    t.equal(refreshed.headers.get('cache-control'), 'no-store');
    t.equal(refreshed.body.scope, 'read');
    t.not(refreshed.body.refresh_token, exchanged.body.refresh_token, 'refresh token rotated');
    const readOnly = { authorization: `Bearer ${refreshed.body.access_token}` };
    t.equal((await fetch(`${base}/v1/oauth-probe/read`, { headers: readOnly })).status, 200);
    t.equal((await fetch(`${base}/v1/oauth-probe/write`, { headers: readOnly })).status, 403);
    // The grant keeps its scope: the rotated refresh token can still get write.
    const again = await postForm(`${base}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    t.equal(again.status, 200);
    t.equal(again.body.scope, 'read write');

    // RFC 7009: revoking the refresh token revokes the grant, its refresh tokens and its access tokens.
    const revoked = await postForm(
      `${base}/oauth/revoke`,
      { token: again.body.refresh_token, token_type_hint: 'refresh_token' },
      { authorization: basicAuth(app.clientId, app.clientSecret!) },
    );
    t.equal(revoked.status, 200);
    t.equal(revoked.headers.get('cache-control'), 'no-store');
    const dead = await postForm(`${base}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: again.body.refresh_token,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    t.equal(dead.status, 400);
    t.same(dead.body, { error: 'invalid_grant', error_description: 'The refresh token was revoked.' });
    for (const token of [exchanged.body.access_token, refreshed.body.access_token, again.body.access_token]) {
      await waitUntil(
        async () =>
          (await fetch(`${base}/v1/oauth-probe/read`, { headers: { authorization: `Bearer ${token}` } })).status ===
          401,
        'revoked access token refused',
      );
    }
    const refused = await fetch(`${base}/v1/oauth-probe/read`, { headers: bearer });
    t.match(
      refused.headers.get('www-authenticate'),
      /^Bearer realm="meterline", error="invalid_token", error_description="The access token was revoked\."$/,
    );
  });

  t.test('a second authorization reuses the browser session: straight to consent', async (t) => {
    const browser = new FormBrowser();
    const url = authorizeUrl(base, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: 'http://127.0.0.1:8765/cb',
      state: 'one',
    });
    await browser.authorize(url, user);
    const consent = await browser.open(
      authorizeUrl(base, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: 'http://127.0.0.1:8765/cb',
        state: 'two',
      }),
    );
    t.match(consent.html, /name="decision" value="approve"/);
    t.notMatch(consent.html, /name="password"/);
  });

  t.test('no scope requested → read', async (t) => {
    const callback = await new FormBrowser().authorize(
      authorizeUrl(base, { response_type: 'code', client_id: app.clientId, redirect_uri: 'http://127.0.0.1:8765/cb' }),
      user,
    );
    t.notOk(callback.searchParams.has('state'), 'no state sent, none returned');
    const tokens = await postForm(
      `${base}/oauth/token`,
      {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: 'http://127.0.0.1:8765/cb',
      },
      { authorization: basicAuth(app.clientId, app.clientSecret!) },
    );
    t.equal(tokens.body.scope, 'read');
  });

  t.test('deny → access_denied with state and iss', async (t) => {
    const callback = await new FormBrowser().authorize(
      authorizeUrl(base, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: app.redirectUri,
        scope: 'read',
        state: 'deny-me',
      }),
      user,
      'deny',
    );
    t.equal(`${callback.origin}${callback.pathname}`, 'https://app.example.com/callback');
    t.equal(callback.searchParams.get('error'), 'access_denied');
    t.equal(callback.searchParams.get('state'), 'deny-me');
    t.equal(callback.searchParams.get('iss'), base);
    t.notOk(callback.searchParams.has('code'));
  });

  t.test('admin: only operators grant it; the token response says what was granted', async (t) => {
    const url = authorizeUrl(base, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: 'http://127.0.0.1:8765/cb',
      scope: 'read write admin',
    });
    const exchange = async (callback: URL) =>
      (
        await postForm(
          `${base}/oauth/token`,
          {
            grant_type: 'authorization_code',
            code: callback.searchParams.get('code')!,
            redirect_uri: 'http://127.0.0.1:8765/cb',
          },
          { authorization: basicAuth(app.clientId, app.clientSecret!) },
        )
      ).body;

    const userBrowser = new FormBrowser();
    const consent = await (async () => {
      const page = await userBrowser.open(url);
      const signed = await userBrowser.submit(page, { email: user.email, password: user.password });
      return userBrowser.open(new URL(signed.headers.get('location')!, base).toString());
    })();
    t.notMatch(consent.html, /<li><strong>admin<\/strong>/, 'admin not offered');
    t.match(consent.html, /your account cannot grant it: <strong>admin<\/strong>/);
    const userTokens = await exchange(
      new URL((await userBrowser.submit(consent, {}, { name: 'decision', value: 'approve' })).headers.get('location')!),
    );
    t.equal(userTokens.scope, 'read write');
    t.equal(
      (await fetch(`${base}/v1/oauth-probe/admin`, { headers: { authorization: `Bearer ${userTokens.access_token}` } }))
        .status,
      403,
    );

    const adminOnly = await exchange(
      await new FormBrowser().authorize(
        authorizeUrl(base, {
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: 'http://127.0.0.1:8765/cb',
          scope: 'admin',
        }),
        user,
      ),
    );
    t.equal(adminOnly.scope, 'write', 'admin alone falls back to the strongest scope the user has');

    const operatorTokens = await exchange(await new FormBrowser().authorize(url, operator));
    t.equal(operatorTokens.scope, 'read write admin');
    const probe = await fetch(`${base}/v1/oauth-probe/admin`, {
      headers: { authorization: `Bearer ${operatorTokens.access_token}` },
    });
    t.equal(probe.status, 200);
    t.same((await (probe.json() as Promise<any>)).scopes, ['read', 'write', 'admin']);
  });

  t.test('public client: PKCE, client_id only, rotation', async (t) => {
    const spa = await registerClient(infra, {
      isPublic: true,
      name: 'Single page app',
      redirectUris: ['http://localhost:5173/callback'],
    });
    t.equal(spa.clientSecret, null);
    const callback = await new FormBrowser().authorize(
      authorizeUrl(base, {
        response_type: 'code',
        client_id: spa.clientId,
        redirect_uri: spa.redirectUri,
        scope: 'read',
        state: 's',
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
      }),
      user,
    );
    const tokens = await postForm(`${base}/oauth/token`, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: spa.redirectUri,
      client_id: spa.clientId,
      code_verifier: VERIFIER,
    });
    t.equal(tokens.status, 200, `token exchange (${tokens.body?.error ?? 'ok'})`);
    const refreshed = await postJson(`${base}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: spa.clientId,
    });
    t.equal(refreshed.status, 200);
    t.equal(refreshed.body.scope, 'read');
  });
});
