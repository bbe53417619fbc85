import t from 'tap';
import { createServer } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { freePort } from '../fixtures/env.js';
import { CHROMIUM_PATH } from '../fixtures/tools.js';
import {
  basicAuth,
  CHALLENGE,
  createUser,
  postForm,
  registerClient,
  startOAuthServer,
  VERIFIER,
} from '../fixtures/oauth.js';

/**
 * A real headless Chromium (Debian's, installed by the test set-up) signs in, approves, and lands on
 * the client's redirect URI with a code: cookies, SameSite, CSP, the forms and the redirects as a
 * browser really handles them.
 */
t.test('headless Chromium: sign in, approve, land on the redirect URI with a code', async (t) => {
  t.ok(
    existsSync(CHROMIUM_PATH),
    `${CHROMIUM_PATH} is installed (npm test installs it; else: apt-get install -y chromium)`,
  );
  const { base, infra } = await startOAuthServer(t);
  const user = await createUser(infra);

  // The client's redirect URI: a tiny app that records what reached it.
  const callbacks: URL[] = [];
  const cbPort = await freePort();
  const app = createServer((req, res) => {
    callbacks.push(new URL(req.url!, `http://127.0.0.1:${cbPort}`));
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Callback</title><h1>Signed in</h1>');
  });
  await new Promise<void>((resolve) => app.listen(cbPort, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => app.close(() => resolve())));
  const redirectUri = `http://127.0.0.1:${cbPort}/callback`;
  const client = await registerClient(infra, { name: 'Browser Test App', redirectUris: [redirectUri] });

  const userDataDir = await mkdtemp(join(tmpdir(), 'meterline-chromium-'));
  t.teardown(() => rm(userDataDir, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: 60_000,
  });
  t.teardown(() => context.close());
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));

  const authorize = new URL('/oauth/authorize', base);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: redirectUri,
    scope: 'read write',
    state: 'browser-state',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  }).toString();
  const signIn = await page.goto(authorize.toString());
  t.equal(signIn?.status(), 200);
  t.match(await page.title(), /Sign in/);
  t.match(await page.textContent('h1'), /Browser Test App/);

  const [cookie] = await context.cookies(`${base}/oauth/authorize`);
  t.match(cookie, { name: 'meterline_session', httpOnly: true, sameSite: 'Lax', path: '/oauth' });

  await page.fill('input[name="email"]', user.email);
  await page.fill('input[name="password"]', user.password);
  await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('button[type="submit"]')]);
  t.match(await page.textContent('h1'), /Browser Test App wants to access your meterline account/);
  t.match(await page.textContent('main'), new RegExp(`Signed in as ${user.email.replace(/\./g, '\\.')}`));

  await Promise.all([
    page.waitForURL((u) => u.toString().startsWith(redirectUri)),
    page.click('button[name="decision"][value="approve"]'),
  ]);
  const landed = new URL(page.url());
  t.equal(`${landed.origin}${landed.pathname}`, redirectUri);
  t.match(landed.searchParams.get('code'), /^[A-Za-z0-9_-]{43}$/);
  t.equal(landed.searchParams.get('state'), 'browser-state');
  t.equal(landed.searchParams.get('iss'), base);
  t.equal(await page.textContent('h1'), 'Signed in');
  t.equal(callbacks.filter((u) => u.pathname === '/callback').length, 1, 'the redirect URI was reached once');
  t.same(consoleErrors, [], 'no console errors (CSP violations would show here)');

  // The client finishes the job.
  const tokens = await postForm(
    `${base}/oauth/token`,
    {
      grant_type: 'authorization_code',
      code: landed.searchParams.get('code')!,
      redirect_uri: redirectUri,
      code_verifier: VERIFIER,
    },
    { authorization: basicAuth(client.clientId, client.clientSecret!) },
  );
  t.equal(tokens.status, 200, `token exchange (${tokens.body?.error ?? 'ok'})`);
  t.equal(tokens.body.scope, 'read write');
});
