import t from 'tap';
import { s256Challenge, verifierMatches, S256_CHALLENGE } from '../../shared/auth/pkce.js';
import { hashOpaqueToken, matchesHash, newOpaqueToken } from '../../shared/auth/opaque-tokens.js';
import { redirectUriProblem } from '../../services/domain/accounts/clients.js';
import { authorizationResponse } from '../../services/control/oauth/authorization-request.js';
import { Sessions } from '../../services/control/oauth/session.js';
import { backoffMs, FREE_PER_PAIR } from '../../services/control/oauth/sign-in-throttle.js';
import { escapeHtml, consentPage } from '../../services/control/oauth/templates.js';
import type { PgPool } from '../../shared/clients/postgres.js';

t.test('PKCE S256 (RFC 7636 appendix B)', async (t) => {
  t.equal(s256Challenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'), 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  t.ok(verifierMatches('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'));
  t.notOk(
    verifierMatches('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'),
  );
  t.notOk(verifierMatches('short', s256Challenge('short')), 'verifiers under 43 characters are refused');
  t.notOk(verifierMatches('a'.repeat(129), s256Challenge('a'.repeat(129))), 'over 128 refused');
  t.ok(S256_CHALLENGE.test(s256Challenge('x'.repeat(43))));
});

t.test('opaque tokens: 256 bits, stored as SHA-256 only', async (t) => {
  const a = newOpaqueToken();
  t.match(a, /^[A-Za-z0-9_-]{43}$/);
  t.not(a, newOpaqueToken());
  const h = hashOpaqueToken(a);
  t.not(h, a);
  t.ok(matchesHash(a, h));
  t.notOk(matchesHash(a + 'x', h));
  t.notOk(matchesHash(a, 'short'));
});

t.test('redirect URIs that can be registered (RFC 9700 §2.1, RFC 8252 §7)', async (t) => {
  for (const ok of [
    'https://app.example.com/cb',
    'https://app.example.com/cb?tenant=1',
    'http://127.0.0.1:8080/cb',
    'http://localhost/cb',
    'http://[::1]:9000/cb',
    'com.example.app:/oauth2redirect',
  ]) {
    t.equal(redirectUriProblem(ok), null, ok);
  }
  const bad: [string, RegExp][] = [
    ['http://app.example.com/cb', /loopback/],
    ['https://app.example.com/cb#frag', /fragment/],
    ['/relative/cb', /absolute/],
    ['javascript:alert(1)', /not allowed/],
    ['data:text/html,hi', /not allowed/],
    ['myapp:/cb', /reverse-domain/],
    ['https://app.example.com/c b', /whitespace/],
    ['', /absolute/],
  ];
  for (const [uri, why] of bad) t.match(redirectUriProblem(uri), why, uri);
});

t.test('authorization responses keep the registered query and add iss', async (t) => {
  const loc = new URL(
    authorizationResponse('https://app.example.com/cb?tenant=1', 'https://auth.example.com', {
      code: 'abc',
      state: 'a b&c',
      error: undefined,
    }),
  );
  t.equal(loc.searchParams.get('tenant'), '1');
  t.equal(loc.searchParams.get('code'), 'abc');
  t.equal(loc.searchParams.get('state'), 'a b&c');
  t.equal(loc.searchParams.get('iss'), 'https://auth.example.com');
  t.notOk(loc.searchParams.has('error'));
});

t.test('session cookie and CSRF tokens', async (t) => {
  const secret = Buffer.alloc(32, 7);
  const sessions = new Sessions({} as PgPool, secret, false);
  const { value, setCookie } = sessions.anonymous();
  t.match(setCookie, /^meterline_session=[A-Za-z0-9_-]{43}; Path=\/oauth; HttpOnly; SameSite=Lax$/);
  t.equal(sessions.cookie(`other=1; meterline_session=${value}; x=y`), value);
  t.equal(sessions.cookie('meterline_session=tooshort'), undefined);
  t.equal(sessions.cookie(undefined), undefined);
  const token = sessions.csrfToken(value, 'sign-in');
  t.ok(sessions.csrfValid(value, 'sign-in', token));
  t.notOk(sessions.csrfValid(value, 'consent', token), 'bound to its purpose');
  t.notOk(sessions.csrfValid(sessions.anonymous().value, 'sign-in', token), 'bound to its cookie');
  t.notOk(sessions.csrfValid(undefined, 'sign-in', token));
  t.notOk(sessions.csrfValid(value, 'sign-in', undefined));
  t.notOk(
    new Sessions({} as PgPool, Buffer.alloc(32, 8), false).csrfValid(value, 'sign-in', token),
    'bound to the deployment secret',
  );
  const secure = new Sessions({} as PgPool, secret, true);
  t.match(secure.anonymous().setCookie, /^__Host-meterline_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
});

t.test('sign-in backoff doubles after the free failures, up to 15 minutes', async (t) => {
  t.equal(backoffMs(FREE_PER_PAIR - 1, FREE_PER_PAIR), 0, 'no wait while under the free failures');
  t.equal(backoffMs(FREE_PER_PAIR, FREE_PER_PAIR), 1_000);
  t.equal(backoffMs(FREE_PER_PAIR + 1, FREE_PER_PAIR), 2_000);
  t.equal(backoffMs(FREE_PER_PAIR + 3, FREE_PER_PAIR), 8_000);
  t.equal(backoffMs(FREE_PER_PAIR + 40, FREE_PER_PAIR), 15 * 60_000, 'capped');
});

t.test('pages escape what they show', async (t) => {
  t.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  const page = consentPage({
    clientName: '<script>alert(1)</script>',
    email: 'a@example.com',
    granted: ['read'],
    withheld: [],
    csrfToken: 't',
  });
  t.notMatch(String(page.raw), /<script>/);
  t.match(String(page.raw), /&lt;script&gt;alert\(1\)&lt;\/script&gt; wants to access/);
  t.equal(page.headers!['X-Frame-Options'], 'DENY');
});
