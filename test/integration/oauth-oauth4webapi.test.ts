import t from 'tap';
import * as oauth from 'oauth4webapi';
import { waitUntil } from '../fixtures/env.js';
import { createUser, FormBrowser, registerClient, startOAuthServer } from '../fixtures/oauth.js';

/**
 * The same flow through oauth4webapi, a strict standards-following client: it checks the discovery
 * document's issuer, the RFC 9207 `iss` in the authorization response, the token response's shape
 * and types, and the revocation response. http:// is allowed only because the test server is local.
 */
t.test('oauth4webapi: discovery, PKCE, code exchange, refresh, revocation', async (t) => {
  const { base, infra } = await startOAuthServer(t);
  const user = await createUser(infra);
  const insecure = { [oauth.allowInsecureRequests]: true };
  const issuer = new URL(base);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
  t.equal(as.issuer, base);
  t.same(as.code_challenge_methods_supported, ['S256']);

  /** Authorization request built by the library, approved in the HTML pages, validated by the library. */
  async function authorize(client: oauth.Client, redirectUri: string, scope: string) {
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('client_id', client.client_id);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', scope);
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    const callback = await new FormBrowser().authorize(url.toString(), user);
    return { params: oauth.validateAuthResponse(as, client, callback, state), codeVerifier };
  }

  const variants = [
    {
      name: 'confidential client, client_secret_basic',
      isPublic: false,
      auth: (secret: string | null) => oauth.ClientSecretBasic(secret!),
    },
    {
      name: 'confidential client, client_secret_post',
      isPublic: false,
      auth: (secret: string | null) => oauth.ClientSecretPost(secret!),
    },
    { name: 'public client, none', isPublic: true, auth: () => oauth.None() },
  ];
  for (const v of variants) {
    t.test(v.name, async (t) => {
      const registered = await registerClient(infra, {
        isPublic: v.isPublic,
        redirectUris: ['http://127.0.0.1:43110/callback'],
      });
      const client: oauth.Client = { client_id: registered.clientId };
      const clientAuth = v.auth(registered.clientSecret);

      const { params, codeVerifier } = await authorize(client, registered.redirectUri, 'read write');
      t.equal(params.get('iss'), base);
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(
          as,
          client,
          clientAuth,
          params,
          registered.redirectUri,
          codeVerifier,
          insecure,
        ),
      );
      t.equal(tokens.token_type, 'bearer', 'oauth4webapi lower-cases token_type');
      t.equal(tokens.scope, 'read write');
      t.equal(tokens.expires_in, 3600);
      t.type(tokens.refresh_token, 'string');

      const api = await oauth.protectedResourceRequest(
        tokens.access_token,
        'GET',
        new URL(`${base}/v1/oauth-probe/write`),
        undefined,
        undefined,
        insecure,
      );
      t.equal(api.status, 200);

      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, insecure),
      );
      t.not(refreshed.refresh_token, tokens.refresh_token, 'rotated');
      t.equal(refreshed.scope, 'read write');

      // Revoking the access token: refused within moments, while the grant itself lives on.
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, clientAuth, refreshed.access_token, {
          additionalParameters: { token_type_hint: 'access_token' },
          ...insecure,
        }),
      );
      // The library parses the RFC 6750 challenge of the 401 and throws it.
      let challenge: oauth.WWWAuthenticateChallengeError | undefined;
      await waitUntil(async () => {
        const e = await oauth
          .protectedResourceRequest(
            refreshed.access_token,
            'GET',
            new URL(`${base}/v1/oauth-probe/read`),
            undefined,
            undefined,
            insecure,
          )
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        if (e instanceof oauth.WWWAuthenticateChallengeError) challenge = e;
        return challenge !== undefined;
      }, 'revoked access token refused');
      t.equal(challenge!.status, 401);
      t.match(challenge!.cause[0], {
        scheme: 'bearer',
        parameters: { realm: 'meterline', error: 'invalid_token', error_description: 'The access token was revoked.' },
      });
      // The refresh token is untouched by revoking one access token.
      const afterAccessRevoked = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token!, insecure),
      );
      t.type(afterAccessRevoked.access_token, 'string');

      // Revoking the refresh token ends the grant: refreshing fails with invalid_grant.
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, clientAuth, afterAccessRevoked.refresh_token!, insecure),
      );
      const err = await oauth
        .processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(as, client, clientAuth, afterAccessRevoked.refresh_token!, insecure),
        )
        .catch((e: unknown) => e);
      t.ok(err instanceof oauth.ResponseBodyError, String(err));
      t.equal((err as oauth.ResponseBodyError).error, 'invalid_grant');
      t.equal((err as oauth.ResponseBodyError).status, 400);
    });
  }

  t.test("an authorization error response passes the library's iss check and surfaces the error", async (t) => {
    const registered = await registerClient(infra, { redirectUris: ['http://127.0.0.1:43110/callback'] });
    const client: oauth.Client = { client_id: registered.clientId };
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: registered.redirectUri,
      response_type: 'code',
      scope: 'superuser',
      state: 'x1',
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    t.equal(res.status, 302);
    const err = (() => {
      try {
        oauth.validateAuthResponse(as, client, new URL(res.headers.get('location')!), 'x1');
      } catch (e) {
        return e;
      }
    })();
    t.ok(err instanceof oauth.AuthorizationResponseError, String(err));
    t.equal((err as oauth.AuthorizationResponseError).error, 'invalid_scope');
  });

  t.test('wrong client secret: 401 invalid_client with a Basic challenge', async (t) => {
    const registered = await registerClient(infra);
    const client: oauth.Client = { client_id: registered.clientId };
    const res = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic('not-the-secret'),
      'whatever',
      insecure,
    );
    t.equal(res.status, 401);
    t.match(res.headers.get('www-authenticate'), /^Basic realm="meterline"/);
    const err = await oauth.processRefreshTokenResponse(as, client, res).catch((e: unknown) => e);
    t.ok(err instanceof oauth.WWWAuthenticateChallengeError || err instanceof oauth.ResponseBodyError, String(err));
  });
});
