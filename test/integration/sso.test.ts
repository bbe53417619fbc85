import t, { type Test } from 'tap';
import { createAccount } from '../../services/domain/accounts/store.js';
import { ssoRedirectUri } from '../../services/control/sso/context.js';
import { ssoModule } from '../../services/control/sso/module.js';
import {
  authorizeUrl,
  CHALLENGE,
  createUser,
  FormBrowser,
  type Page,
  postForm,
  registerClient,
  startOAuthServer,
  VERIFIER,
} from '../fixtures/oauth.js';
import { freePort } from '../fixtures/env.js';
import { startTestIdp } from '../fixtures/oidc-idp.js';

/**
 * Single sign-on of operator staff (docs/sso.md) against a real OpenID Connect provider (oidc-provider) the test
 * runs: the browser is a cookie jar following redirects through both servers.
 */
t.test('OIDC single sign-on for operator staff', async (t) => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const client = {
    clientId: 'meterline',
    clientSecret: 'idp-client-secret-0123456789',
    redirectUri: ssoRedirectUri(base),
  };
  const idp = await startTestIdp(t, client);
  const { infra } = await startOAuthServer(
    t,
    {
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      SSO_ISSUER: idp.issuer,
      SSO_CLIENT_ID: client.clientId,
      SSO_CLIENT_SECRET: client.clientSecret,
      SSO_ALLOWED_DOMAINS: 'acme.test',
      SSO_ROLE_CLAIM: 'groups',
      SSO_ROLE_MAP: 'billing-team=billing,admins=admin,*=support',
      SSO_PASSWORD_SIGNIN: 'false',
    },
    [ssoModule],
  );
  const owner = await createUser(infra, { operator: true });
  const app = await registerClient(infra, { name: 'Console', redirectUris: ['http://127.0.0.1:9/cb'] });
  const appAuthorize = authorizeUrl(base, {
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    scope: 'read write admin',
    state: 's',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  });
  const userRow = async (email: string) =>
    (
      await infra.pg.query('SELECT id, account_id, is_operator, role FROM users WHERE lower(email) = lower($1)', [
        email,
      ])
    ).rows[0];

  /** Start → provider → back: returns the callback URL the provider sent the browser to (not yet opened). */
  const throughProvider = async (browser: FormBrowser, startUrl = `${base}/console/sso/start`): Promise<string> => {
    let page = await browser.fetch(startUrl);
    for (let hop = 0; hop < 12; hop++) {
      if (![302, 303].includes(page.status))
        throw new Error(`stuck at ${page.url}: ${page.status} ${page.html.slice(0, 300)}`);
      const next = new URL(page.headers.get('location')!, page.url).toString();
      if (next.startsWith(client.redirectUri)) return next;
      page = await browser.fetch(next);
    }
    throw new Error('too many redirects');
  };
  const signIn = async (
    sub: string,
    browser = new FormBrowser(),
  ): Promise<{ browser: FormBrowser; page: Page; callbackUrl: string }> => {
    idp.signInAs(sub);
    const callbackUrl = await throughProvider(browser);
    return { browser, callbackUrl, page: await browser.fetch(callbackUrl) };
  };
  /** Consent and code exchange for a test app with the browser's session: the access token's claims. */
  const tokenClaims = async (browser: FormBrowser) => {
    const redirect = await browser.authorize(appAuthorize, null);
    const exchanged = await postForm(`${base}/oauth/token`, {
      grant_type: 'authorization_code',
      code: redirect.searchParams.get('code')!,
      redirect_uri: app.redirectUri,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
      code_verifier: VERIFIER,
    });
    return JSON.parse(Buffer.from(exchanged.body.access_token.split('.')[1], 'base64url').toString());
  };
  const refused = (t: Test, page: Page, status: number, code: string) => {
    t.equal(page.status, status, page.html.slice(0, 400));
    t.equal(page.headers.get('meterline-error'), code);
    t.match(page.html, new RegExp(`<code>${code}</code>`));
    t.notOk(
      page.headers.getSetCookie().some((c) => c.startsWith('meterline_session=')),
      'no session started',
    );
  };

  t.test(
    'the sign-in page links to SSO; a first sign-in provisions the operator user with the mapped role',
    async (t) => {
      idp.accounts.set('alice-sub', {
        email: 'Alice@acme.test',
        email_verified: true,
        groups: ['staff', 'billing-team'],
      });
      idp.signInAs('alice-sub');
      const browser = new FormBrowser();
      const signInPage = await browser.open(appAuthorize);
      const link = /<a href="([^"]+)">Sign in with SSO<\/a>/.exec(signInPage.html)?.[1]?.replace(/&amp;/g, '&');
      t.ok(link, 'the password form offers single sign-on');
      const callbackUrl = await throughProvider(browser, new URL(link!, base).toString());
      const callback = await browser.fetch(callbackUrl);
      t.equal(callback.status, 303, callback.html.slice(0, 400));
      t.equal(
        callback.headers.get('location'),
        new URL(appAuthorize).pathname + new URL(appAuthorize).search,
        'back to the authorization request the sign-in began from',
      );
      t.match(
        callback.headers.get('set-cookie'),
        /^meterline_session=[A-Za-z0-9_-]{43}; Path=\/oauth; HttpOnly; SameSite=Lax; Max-Age=28800$/,
      );

      const row = await userRow('alice@acme.test');
      t.match(
        row,
        { is_operator: true, role: 'billing', account_id: owner.accountId },
        'joined the operator account as billing',
      );
      const claims = await tokenClaims(browser);
      t.match(
        claims,
        { uid: row.id, sub: owner.accountId, role: 'billing' },
        'the session grants tokens of the mapped role',
      );

      const audit = await infra.pg.query(
        `SELECT action, actor_type, actor_name, operation, after FROM audit_events WHERE resource_id = $1 ORDER BY occurred_at`,
        [row.id],
      );
      t.equal(audit.rows.length, 1);
      t.match(audit.rows[0], {
        action: 'create',
        actor_type: 'public',
        operation: 'GET /console/sso/callback',
        actor_name: 'sso Alice@acme.test',
        after: { role: 'billing', is_operator: true },
      });
    },
  );

  t.test(
    'a role mapping change at the provider applies on the next sign-in, audited; no match → the default',
    async (t) => {
      idp.accounts.set('alice-sub', { email: 'alice@acme.test', email_verified: true, groups: ['admins'] });
      const { browser, page } = await signIn('alice-sub');
      t.equal(page.status, 303);
      const row = await userRow('alice@acme.test');
      t.equal(row.role, 'admin');
      t.match(await tokenClaims(browser), { uid: row.id, role: 'admin' });
      const audit = await infra.pg.query(
        `SELECT action, actor_type, operation, before, after FROM audit_events WHERE resource_id = $1 AND action = 'update'`,
        [row.id],
      );
      t.equal(audit.rows.length, 1);
      t.match(audit.rows[0], {
        before: { role: 'billing' },
        after: { role: 'admin' },
        actor_type: 'public',
        operation: 'GET /console/sso/callback',
      });

      idp.accounts.set('bob-sub', { email: 'bob@acme.test', email_verified: true, groups: ['marketing'] });
      t.equal((await signIn('bob-sub')).page.status, 303);
      t.equal((await userRow('bob@acme.test')).role, 'support', '*=support');
    },
  );

  t.test('an id_token issued to another application is refused (wrong audience)', async (t) => {
    idp.issueNextIdTokenToAnotherApp();
    const { page } = await signIn('alice-sub');
    refused(t, page, 400, 'sso_wrong_audience');
  });

  t.test('a replayed code is refused by the provider and shown as such', async (t) => {
    const { browser, page, callbackUrl } = await signIn('alice-sub');
    t.equal(page.status, 303);
    const replay = await browser.fetch(callbackUrl);
    refused(t, replay, 400, 'sso_code_rejected');
  });

  t.test('an unverified email is refused and provisions nobody', async (t) => {
    idp.accounts.set('carol-sub', { email: 'carol@acme.test', email_verified: false, groups: ['admins'] });
    refused(t, (await signIn('carol-sub')).page, 403, 'sso_email_unverified');
    idp.accounts.set('carol-sub', { email: 'carol@acme.test', email_verified: 'true', groups: ['admins'] });
    refused(t, (await signIn('carol-sub')).page, 403, 'sso_email_unverified');
    t.equal(await userRow('carol@acme.test'), undefined);
  });

  t.test('an email of a domain not allowed is refused', async (t) => {
    idp.accounts.set('eve-sub', { email: 'eve@evil.test', email_verified: true, groups: ['admins'] });
    refused(t, (await signIn('eve-sub')).page, 403, 'sso_domain_not_allowed');
    t.equal(await userRow('eve@evil.test'), undefined);
  });

  t.test('a callback this browser did not start is refused (state mismatch)', async (t) => {
    idp.signInAs('alice-sub');
    const callbackUrl = await throughProvider(new FormBrowser());
    refused(t, await new FormBrowser().fetch(callbackUrl), 400, 'sso_state_mismatch');
    const browser = new FormBrowser();
    const own = new URL(await throughProvider(browser));
    own.searchParams.set('state', 'forged');
    refused(t, await browser.fetch(own.toString()), 400, 'sso_state_mismatch');
  });

  t.test('a customer sign-in with the same email is never made an operator', async (t) => {
    const ids = await createAccount(infra.pg, {
      name: 'Customer',
      email: 'dave@acme.test',
      password: 'pw-of-dave-123',
    });
    idp.accounts.set('dave-sub', { email: 'dave@acme.test', email_verified: true, groups: ['admins'] });
    refused(t, (await signIn('dave-sub')).page, 403, 'sso_not_operator');
    t.match(await userRow('dave@acme.test'), { id: ids.user_id, is_operator: false });
  });

  t.test('with SSO_PASSWORD_SIGNIN off, password sign-in is refused for the SSO domain only', async (t) => {
    const password = 'correct horse battery staple';
    await createAccount(infra.pg, { name: 'Pw', email: 'frank@acme.test', password, operator: true });
    const browser = new FormBrowser();
    const form = await browser.open(appAuthorize);
    const answer = await browser.submit(form, { email: 'frank@acme.test', password });
    t.equal(answer.status, 403);
    t.match(answer.html, /signs in with single sign-on here, not with a password/);
    t.notOk(
      browser.setCookies.some((c) => /Max-Age=28800/.test(c)),
      'no session',
    );

    const other = new FormBrowser();
    const otherAnswer = await other.submit(await other.open(appAuthorize), {
      email: owner.email,
      password: owner.password,
    });
    t.equal(otherAnswer.status, 303, 'another domain still signs in with its password');
  });
});
