import t from 'tap';
import { FREE_PER_PAIR } from '../../services/control/oauth/sign-in-throttle.js';
import {
  authorizeUrl,
  CHALLENGE,
  createUser,
  FormBrowser,
  parseForm,
  registerClient,
  startOAuthServer,
} from '../fixtures/oauth.js';

/** Every way an authorization request or its forms can be wrong (RFC 6749 §4.1.2.1, RFC 7636, RFC 9700). */
t.test('authorization endpoint failures', async (t) => {
  const { base, infra } = await startOAuthServer(t, { SIGN_IN_BACKOFF_BASE_SECONDS: '60' });
  const user = await createUser(infra);
  const app = await registerClient(infra, {
    redirectUris: ['https://app.example.com/cb', 'https://app.example.com/cb2'],
  });
  const spa = await registerClient(infra, { isPublic: true, redirectUris: ['http://127.0.0.1:7777/cb'] });
  const count = async (table: string) => Number((await infra.pg.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);

  const get = (params: Record<string, string | undefined> | string) =>
    fetch(typeof params === 'string' ? `${base}/oauth/authorize?${params}` : authorizeUrl(base, params), {
      redirect: 'manual',
    });

  t.test('untrusted client or redirect URI: an HTML error page, never a redirect', async (t) => {
    const cases: [string, Record<string, string | undefined> | string, RegExp][] = [
      [
        'no client_id',
        { response_type: 'code', redirect_uri: 'https://app.example.com/cb', state: 's' },
        /no client_id/,
      ],
      [
        'unknown client',
        {
          response_type: 'code',
          client_id: 'cli_doesnotexist',
          redirect_uri: 'https://app.example.com/cb',
          state: 's',
        },
        /No application is registered with the client_id &quot;cli_doesnotexist&quot;/,
      ],
      [
        'client_id repeated',
        `response_type=code&client_id=${app.clientId}&client_id=${spa.clientId}&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb`,
        /client_id is repeated/,
      ],
      ['another host', { client_id: app.clientId, redirect_uri: 'https://evil.example.com/cb' }, /not registered/],
      ['trailing slash', { client_id: app.clientId, redirect_uri: 'https://app.example.com/cb/' }, /not registered/],
      ['different case', { client_id: app.clientId, redirect_uri: 'https://APP.example.com/cb' }, /not registered/],
      [
        'extra query',
        { client_id: app.clientId, redirect_uri: 'https://app.example.com/cb?next=/admin' },
        /not registered/,
      ],
      ['fragment', { client_id: app.clientId, redirect_uri: 'https://app.example.com/cb#x' }, /not registered/],
      [
        'prefix of a registered one',
        { client_id: app.clientId, redirect_uri: 'https://app.example.com/c' },
        /not registered/,
      ],
      [
        'http instead of https',
        { client_id: app.clientId, redirect_uri: 'http://app.example.com/cb' },
        /not registered/,
      ],
      [
        'omitted while several are registered',
        { response_type: 'code', client_id: app.clientId },
        /redirect_uri is required/,
      ],
      [
        'redirect_uri repeated',
        `response_type=code&client_id=${app.clientId}&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb2`,
        /redirect_uri is repeated/,
      ],
      [
        'bad redirect URI even with other errors',
        { response_type: 'token', client_id: app.clientId, redirect_uri: 'https://evil.example.com/cb', scope: 'nope' },
        /not registered/,
      ],
    ];
    for (const [name, params, message] of cases) {
      const res = await get(params);
      t.equal(res.status, 400, name);
      t.equal(res.headers.get('location'), null, `${name}: no redirect`);
      t.match(res.headers.get('content-type'), /^text\/html/, name);
      t.match(await res.text(), message, name);
    }
  });

  t.test('other errors redirect to the client with error, state and iss', async (t) => {
    const ok = {
      response_type: 'code',
      client_id: spa.clientId,
      redirect_uri: spa.redirectUri,
      scope: 'read',
      state: 'xyz',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    };
    const cases: [string, Record<string, string | undefined> | string, string, RegExp][] = [
      ['response_type missing', { ...ok, response_type: undefined }, 'invalid_request', /response_type is required/],
      ['response_type token', { ...ok, response_type: 'token' }, 'unsupported_response_type', /not supported/],
      ['unknown scope', { ...ok, scope: 'read superuser' }, 'invalid_scope', /Unknown scope "superuser"/],
      ['scopes are case-sensitive', { ...ok, scope: 'READ' }, 'invalid_scope', /Unknown scope "READ"/],
      [
        'public client without PKCE',
        { ...ok, code_challenge: undefined, code_challenge_method: undefined },
        'invalid_request',
        /PKCE is required/,
      ],
      ['plain method', { ...ok, code_challenge_method: 'plain' }, 'invalid_request', /plain is not supported/],
      [
        'challenge without method (means plain)',
        { ...ok, code_challenge_method: undefined },
        'invalid_request',
        /must be S256/,
      ],
      ['unknown method', { ...ok, code_challenge_method: 'S512' }, 'invalid_request', /"S512" is not supported/],
      ['method without challenge', { ...ok, code_challenge: undefined }, 'invalid_request', /without code_challenge/],
      ['malformed challenge', { ...ok, code_challenge: 'short' }, 'invalid_request', /43-character/],
      [
        'repeated scope',
        `${new URLSearchParams(ok as Record<string, string>)}&scope=write`,
        'invalid_request',
        /"scope" is repeated/,
      ],
    ];
    for (const [name, params, error, description] of cases) {
      const res = await get(params);
      t.equal(res.status, 302, name);
      const loc = new URL(res.headers.get('location')!);
      t.equal(`${loc.origin}${loc.pathname}`, 'http://127.0.0.1:7777/cb', name);
      t.equal(loc.searchParams.get('error'), error, name);
      t.match(loc.searchParams.get('error_description'), description, name);
      t.equal(loc.searchParams.get('state'), 'xyz', `${name}: state`);
      t.equal(loc.searchParams.get('iss'), base, `${name}: iss`);
      t.notOk(loc.searchParams.has('code'), name);
    }
    const noState = await get({ ...ok, state: undefined, scope: 'bogus' });
    t.notOk(new URL(noState.headers.get('location')!).searchParams.has('state'), 'no state sent → none returned');
  });

  t.test('a confidential client may omit PKCE; with one registered URI redirect_uri may be omitted', async (t) => {
    const single = await registerClient(infra, { redirectUris: ['https://single.example.com/cb'] });
    const res = await get({ response_type: 'code', client_id: single.clientId });
    t.equal(res.status, 200);
    t.match(await res.text(), /name="password"/);
  });

  t.test('CSRF: sign-in without a valid token creates no session', async (t) => {
    const url = authorizeUrl(base, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: 'https://app.example.com/cb',
    });
    const form = { email: user.email, password: user.password };
    const sessionsBefore = await count('oauth_sessions');

    // A cross-site POST: no cookie (SameSite=Lax keeps it home), no token.
    const noCookie = await new FormBrowser().fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    t.equal(noCookie.status, 403);
    t.match(noCookie.html, /did not come from this site/);

    const browser = new FormBrowser();
    const page = await browser.open(url);
    const wrongToken = await browser.submit(page, { ...form, csrf_token: 'A'.repeat(43) });
    t.equal(wrongToken.status, 403);

    // A token minted for another browser's cookie is worthless with this one.
    const other = new FormBrowser();
    const otherPage = await other.open(url);
    const stolen = await browser.submit(page, { ...form, csrf_token: parseForm(otherPage.html)!.fields.csrf_token! });
    t.equal(stolen.status, 403);

    const missing = await browser.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    t.equal(missing.status, 403);
    t.equal(await count('oauth_sessions'), sessionsBefore, 'no session was created');

    // The re-rendered form works.
    const retry = await browser.submit(missing, form);
    t.equal(retry.status, 303);
    t.equal(await count('oauth_sessions'), sessionsBefore + 1);
  });

  t.test('CSRF: consent needs the consent token of this session', async (t) => {
    const url = authorizeUrl(base, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: 'https://app.example.com/cb',
      state: 's',
    });
    const browser = new FormBrowser();
    const signInPage = await browser.open(url);
    const signInToken = parseForm(signInPage.html)!.fields.csrf_token!;
    const signed = await browser.submit(signInPage, { email: user.email, password: user.password });
    const consent = await browser.open(new URL(signed.headers.get('location')!, base).toString());
    const codesBefore = await count('oauth_authorization_codes');

    const post = (body: Record<string, string>) =>
      browser.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body).toString(),
      });
    const noToken = await post({ decision: 'approve' });
    t.equal(noToken.status, 403);
    t.match(noToken.html, /did not come from this site/);
    t.match(noToken.html, /name="decision" value="approve"/, 'the consent page again, with a fresh token');
    t.equal(
      (await post({ decision: 'approve', csrf_token: signInToken })).status,
      403,
      'the sign-in token is not a consent token',
    );
    const otherSession = new FormBrowser();
    await otherSession.authorize(
      authorizeUrl(base, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: 'https://app.example.com/cb',
      }),
      user,
    );
    const otherConsent = await otherSession.open(url);
    t.equal(
      (await post({ decision: 'approve', csrf_token: parseForm(otherConsent.html)!.fields.csrf_token! })).status,
      403,
      "another session's token",
    );
    const bogus = await browser.submit(consent, {}, { name: 'decision', value: 'maybe' });
    t.equal(bogus.status, 400);
    t.match(bogus.html, /Choose Approve or Deny/);
    t.equal(await count('oauth_authorization_codes'), codesBefore + 1, 'only the other session approved');

    // Without a signed-in session a decision goes back to sign-in.
    const anonymous = new FormBrowser();
    const anonPage = await anonymous.open(url);
    const forged = await anonymous.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        decision: 'approve',
        csrf_token: parseForm(anonPage.html)!.fields.csrf_token!,
      }).toString(),
    });
    t.equal(forged.status, 403);
    t.match(forged.html, /name="password"/);

    const empty = await browser.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'nothing=here',
    });
    t.equal(empty.status, 400);
  });

  t.test('wrong credentials: the form again, no session; repeated failures are throttled', async (t) => {
    const victim = await createUser(infra);
    const url = authorizeUrl(base, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: 'https://app.example.com/cb',
    });
    const browser = new FormBrowser();
    let page = await browser.open(url);
    const cookiesBefore = browser.setCookies.length;
    const wrong = await browser.submit(page, { email: victim.email, password: 'wrong password' });
    t.equal(wrong.status, 400);
    t.match(wrong.html, /The email or password is incorrect/);
    t.match(wrong.html, new RegExp(`value="${victim.email.replace(/\./g, '\\.')}"`), 'email kept');
    t.equal(browser.setCookies.length, cookiesBefore, 'no new session cookie');
    const unknown = await browser.submit(page, { email: 'nobody@example.com', password: 'whatever' });
    t.equal(unknown.status, 400);
    t.match(unknown.html, /The email or password is incorrect/, 'same message for unknown emails');

    // FREE_PER_PAIR failures are free; then the next attempt waits SIGN_IN_BACKOFF_BASE_SECONDS (60 here, so the
    // check below can't outlast it), doubling per further failure.
    page = wrong;
    for (let i = 1; i < FREE_PER_PAIR; i++) {
      page = await browser.submit(page, { email: victim.email, password: `guess ${i}` });
      t.equal(page.status, 400, `guess ${i}: no wait yet`);
    }
    const throttled = await browser.submit(page, { email: victim.email, password: victim.password });
    t.equal(throttled.status, 429, 'the right password is refused too while throttled');
    t.match(throttled.headers.get('retry-after'), /^\d+$/);
    t.match(throttled.html, /Too many failed attempts/);
  });

  t.test('on an https issuer the cookie is __Host-, Secure', async (t) => {
    const secure = await startOAuthServer(t, { PUBLIC_BASE_URL: 'https://auth.example.com' });
    const client = await registerClient(secure.infra, { redirectUris: ['https://app.example.com/cb'] });
    const res = await fetch(
      `http://127.0.0.1:${secure.config.PORT}/oauth/authorize?response_type=code&client_id=${client.clientId}&scope=bogus&state=q`,
      { redirect: 'manual' },
    );
    t.equal(new URL(res.headers.get('location')!).searchParams.get('iss'), 'https://auth.example.com');
    const page = await fetch(
      `http://127.0.0.1:${secure.config.PORT}/oauth/authorize?response_type=code&client_id=${client.clientId}`,
    );
    t.match(
      page.headers.get('set-cookie'),
      /^__Host-meterline_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
    );
  });
});
