import t from 'tap';
import { ApiService } from '../../services/roles/api/service.js';
import { createAuthenticator } from '../../services/roles/api/authenticator.js';
import { oauthRoutes } from '../../services/control/oauth/module.js';
import { FREE_PER_ADDRESS, FREE_PER_PAIR, SignInThrottle } from '../../services/control/oauth/sign-in-throttle.js';
import { freePort, testInfra } from '../fixtures/env.js';
import { parseTrustedProxies } from '../../shared/http/client-address.js';
import {
  authorizeUrl,
  createUser,
  FormBrowser,
  registerClient,
  startOAuthServer,
  type Page,
} from '../fixtures/oauth.js';

/**
 * The sign-in throttle is shared by every api process and keyed by client address: two api servers on one
 * NATS namespace, browsers connecting from different loopback addresses (127.0.0.2 … are the same host to
 * the kernel, other clients to the server). SIGN_IN_BACKOFF_BASE_SECONDS=60: a wait, once due, outlasts
 * the test's next step however slow the machine is.
 */
t.test(
  'sign-in throttle: per address and (address, email), across api processes, backoff, reset on success',
  async (t) => {
    const first = await startOAuthServer(t, { SIGN_IN_BACKOFF_BASE_SECONDS: '60' });
    const secondPort = await freePort();
    const secondInfra = await testInfra(t, { ...first.config, PORT: secondPort }, 'api');
    const second = new ApiService(secondInfra, [oauthRoutes], await createAuthenticator(secondInfra));
    await second.start();
    t.teardown(() => second.stop());
    const secondBase = `http://127.0.0.1:${secondPort}`;

    const app = await registerClient(first.infra, { redirectUris: ['https://app.example.com/cb'] });
    const params = { response_type: 'code', client_id: app.clientId, redirect_uri: 'https://app.example.com/cb' };
    const signIn = async (browser: FormBrowser, base: string, email: string, password: string): Promise<Page> =>
      browser.submit(await browser.open(authorizeUrl(base, params)), { email, password });
    const throttle = await SignInThrottle.open(first.infra.nats, first.infra.natsNames.signInThrottleBucket, 60_000);

    t.test('failures on one process throttle the same address on another; the owner elsewhere signs in', async (t) => {
      const owner = await createUser(first.infra);
      const attacker = new FormBrowser('127.0.0.2');
      for (let i = 0; i < FREE_PER_PAIR; i++) {
        const page = await signIn(attacker, first.base, owner.email, `guess ${i}`);
        t.equal(page.status, 400, `guess ${i} on the first process: wrong password, no wait yet`);
      }
      const refused = await signIn(attacker, secondBase, owner.email, owner.password);
      t.equal(
        refused.status,
        429,
        'the second process knows the failures the first one counted: even the right password waits',
      );
      t.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
      t.match(refused.html, /Too many failed attempts/);

      const fromHome = await signIn(new FormBrowser('127.0.0.1'), secondBase, owner.email, owner.password);
      t.equal(fromHome.status, 303, 'the owner, from another address, is not locked out by the attacker');
    });

    t.test('spraying one password over many emails from one address is throttled', async (t) => {
      const sprayer = new FormBrowser('127.0.0.3');
      let status = 0;
      for (let i = 0; i < FREE_PER_ADDRESS; i++) {
        status = (
          await signIn(sprayer, i % 2 ? secondBase : first.base, `sprayed${i}.${Date.now()}@example.com`, 'Winter2026!')
        ).status;
        t.equal(status, 400, `email ${i}: a plain failure`);
      }
      const victim = await createUser(first.infra);
      const next = await signIn(sprayer, first.base, victim.email, victim.password);
      t.equal(next.status, 429, 'past the free failures of an address, any email waits');
      const elsewhere = await signIn(new FormBrowser('127.0.0.4'), first.base, victim.email, victim.password);
      t.equal(elsewhere.status, 303, 'another address is unaffected');
    });

    t.test('a successful sign-in resets the (address, email) counter', async (t) => {
      const user = await createUser(first.infra);
      const browser = new FormBrowser('127.0.0.5');
      for (let i = 0; i < FREE_PER_PAIR - 1; i++)
        t.equal((await signIn(browser, first.base, user.email, `nope ${i}`)).status, 400);
      t.equal(await throttle.pairFailures('127.0.0.5', user.email), FREE_PER_PAIR - 1, 'failures counted in NATS KV');
      t.equal(
        (await signIn(browser, secondBase, user.email, user.password)).status,
        303,
        'the right password, still under the free failures',
      );
      t.equal(await throttle.pairFailures('127.0.0.5', user.email), 0, 'reset by the success');
      const later = new FormBrowser('127.0.0.5'); // signed out: the sign-in form again
      for (let i = 0; i < FREE_PER_PAIR - 1; i++)
        t.equal(
          (await signIn(later, first.base, user.email, `again ${i}`)).status,
          400,
          `after the reset, failure ${i} has no wait`,
        );
    });

    // Issue 24: the wait check, the password check and the count were separate steps; 30 parallel wrong
    // passwords were all checked. Now each attempt is counted before its password is, atomically.
    t.test('parallel guesses over both processes: no more are checked than the free attempts', async (t) => {
      const owner = await createUser(first.infra);
      const attacker = new FormBrowser('127.0.0.7');
      const forms = [
        await attacker.open(authorizeUrl(first.base, params)),
        await attacker.open(authorizeUrl(secondBase, params)),
      ];
      const pair = await Promise.all(
        Array.from({ length: 30 }, (_v, i) =>
          attacker.submit(forms[i % 2]!, { email: owner.email, password: `parallel ${i}` }).then((p) => p.status),
        ),
      );
      t.equal(pair.filter((s) => s === 400).length, FREE_PER_PAIR, `${FREE_PER_PAIR} passwords checked`);
      t.equal(pair.filter((s) => s === 429).length, 30 - FREE_PER_PAIR, 'every other one waits, unchecked');
      t.equal(await throttle.pairFailures('127.0.0.7', owner.email), FREE_PER_PAIR, 'exactly those counted');

      const sprayer = new FormBrowser('127.0.0.8');
      const sprayForms = [
        await sprayer.open(authorizeUrl(first.base, params)),
        await sprayer.open(authorizeUrl(secondBase, params)),
      ];
      const spray = await Promise.all(
        Array.from({ length: 40 }, (_v, i) =>
          sprayer
            .submit(sprayForms[i % 2]!, { email: `parallel${i}.${Date.now()}@example.com`, password: 'Winter2026!' })
            .then((p) => p.status),
        ),
      );
      t.equal(
        spray.filter((s) => s === 400).length,
        FREE_PER_ADDRESS,
        `the address: ${FREE_PER_ADDRESS} checked (${spray.join(',')})`,
      );
      t.equal(spray.filter((s) => s === 429).length, 40 - FREE_PER_ADDRESS, 'the rest wait');
    });

    // Issue 49: behind a load balancer every client was the balancer's address — one attacker locked out everyone.
    t.test(
      'behind a trusted proxy each client is its X-Forwarded-For address; an untrusted peer’s is ignored',
      async (t) => {
        const proxiedPort = await freePort();
        const proxiedInfra = await testInfra(
          t,
          { ...first.config, PORT: proxiedPort, TRUSTED_PROXIES: parseTrustedProxies('127.0.0.9') },
          'api',
        );
        const proxied = new ApiService(proxiedInfra, [oauthRoutes], await createAuthenticator(proxiedInfra));
        await proxied.start();
        t.teardown(() => proxied.stop());
        const proxiedBase = `http://127.0.0.1:${proxiedPort}`;
        const owner = await createUser(first.infra);

        // The balancer (127.0.0.9) appends each client's address after whatever the client wrote itself.
        const attacker = new FormBrowser('127.0.0.9', { 'x-forwarded-for': '198.51.100.66, 198.51.100.1' });
        for (let i = 0; i < FREE_PER_PAIR; i++)
          t.equal((await signIn(attacker, proxiedBase, owner.email, `guess ${i}`)).status, 400, `guess ${i}`);
        t.equal(await throttle.pairFailures('198.51.100.1', owner.email), FREE_PER_PAIR, 'counted for the client');
        t.equal(await throttle.pairFailures('127.0.0.9', owner.email), 0, 'not for the balancer');
        t.equal(await throttle.pairFailures('198.51.100.66', owner.email), 0, 'nor for what the client wrote');
        t.equal((await signIn(attacker, proxiedBase, owner.email, owner.password)).status, 429, 'the attacker waits');
        const owners = new FormBrowser('127.0.0.9', { 'x-forwarded-for': '198.51.100.2' });
        t.equal(
          (await signIn(owners, proxiedBase, owner.email, owner.password)).status,
          303,
          'the owner, another client behind the same balancer, signs in',
        );

        // Not a trusted proxy: a header naming a new address per attempt changes nothing.
        const forger = new FormBrowser('127.0.0.10');
        const victim = await createUser(first.infra);
        for (let i = 0; i < FREE_PER_PAIR; i++) {
          forger.sentHeaders['x-forwarded-for'] = `203.0.113.${i + 1}`;
          t.equal((await signIn(forger, proxiedBase, victim.email, `guess ${i}`)).status, 400, `forged guess ${i}`);
        }
        forger.sentHeaders['x-forwarded-for'] = '203.0.113.200';
        t.equal(await throttle.pairFailures('127.0.0.10', victim.email), FREE_PER_PAIR, 'all counted for the peer');
        t.equal((await signIn(forger, proxiedBase, victim.email, victim.password)).status, 429, 'the forger waits');
      },
    );

    t.test('a JSON client gets a 429 problem document', async (t) => {
      const user = await createUser(first.infra);
      const browser = new FormBrowser('127.0.0.6');
      for (let i = 0; i < FREE_PER_PAIR; i++) await signIn(browser, first.base, user.email, `x${i}`);
      const page = await browser.open(authorizeUrl(first.base, params));
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.html)![1]!;
      const res = await browser.fetch(authorizeUrl(first.base, params), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: user.email, password: user.password, csrf_token: csrf }),
      });
      t.equal(res.status, 429);
      t.ok(Number(res.headers.get('retry-after')) > 0);
      t.match(res.headers.get('content-type'), /application\/problem\+json/);
      t.equal(JSON.parse(res.html).code, 'rate_limited');
    });
  },
);
