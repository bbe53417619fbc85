import t from 'tap';
import { refreshMarginMs, TokenSession, type TokenResponse } from '../../services/console/web/src/lib/tokens.js';

/**
 * The console's token handling (services/console/web/src/lib/tokens.ts) with a scripted token endpoint and a
 * hand-driven clock and timer: refresh before expiry, one refresh in flight, rotation, and what ends a session.
 */
interface Call {
  url: string;
  body: URLSearchParams;
}

function world(script: (call: Call, n: number) => Response | Promise<Response>) {
  let now = 1_000_000;
  const calls: Call[] = [];
  let timer: { fn: () => void; at: number } | undefined;
  const signedOut: string[] = [];
  const session = new TokenSession({
    tokenEndpoint: '/oauth/token',
    clientId: 'cli_console',
    now: () => now,
    fetch: async (url, init) => {
      const call = { url, body: new URLSearchParams(String(init?.body)) };
      calls.push(call);
      return script(call, calls.length);
    },
    setTimer: (fn, ms) => {
      timer = { fn, at: now + ms };
      return 1 as unknown as ReturnType<typeof setTimeout>;
    },
    clearTimer: () => {
      timer = undefined;
    },
    onSignedOut: (reason) => signedOut.push(reason),
  });
  return {
    session,
    calls,
    signedOut,
    advance(ms: number) {
      now += ms;
    },
    /** Fires the pending refresh timer if its time has come. */
    fireDue(): boolean {
      if (!timer || timer.at > now) return false;
      const { fn } = timer;
      timer = undefined;
      fn();
      return true;
    },
    get timerAt() {
      return timer?.at;
    },
    get now() {
      return now;
    },
  };
}

const tokens = (n: number, extra: Partial<TokenResponse> = {}): TokenResponse => ({
  access_token: `at-${n}`,
  token_type: 'Bearer',
  expires_in: 3600,
  refresh_token: `rt-${n}`,
  scope: 'read write',
  ...extra,
});
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const flush = () => new Promise((r) => setImmediate(r));

t.test('refresh margin: a fifth of the lifetime, at most a minute', async (t) => {
  t.equal(refreshMarginMs(3_600_000), 60_000);
  t.equal(refreshMarginMs(60_000), 12_000);
});

t.test('the timer refreshes before expiry, and the refresh token rotates', async (t) => {
  const w = world((_, n) => json(200, tokens(n + 1)));
  w.session.accept(tokens(1));
  t.equal(await w.session.accessToken(), 'at-1');
  t.equal(w.timerAt, w.now + 3_600_000 - 60_000, 'armed a minute before expiry');
  t.same(w.session.scopes, ['read', 'write']);
  t.ok(w.session.hasScope('write'));
  t.notOk(w.session.hasScope('admin'));

  w.advance(3_540_000);
  t.ok(w.fireDue());
  await flush();
  t.equal(w.calls.length, 1);
  t.same(
    Object.fromEntries(w.calls[0]!.body),
    { grant_type: 'refresh_token', refresh_token: 'rt-1', client_id: 'cli_console' },
    'public client: no secret',
  );
  t.equal(await w.session.accessToken(), 'at-2', 'the new access token');

  w.advance(3_540_000);
  t.ok(w.fireDue());
  await flush();
  t.equal(w.calls[1]!.body.get('refresh_token'), 'rt-2', 'the rotated refresh token, never the spent one');
  t.same(w.signedOut, []);
});

t.test('a late timer (a sleeping laptop): the token is refreshed on use', async (t) => {
  const w = world((_, n) => json(200, tokens(n + 1)));
  w.session.accept(tokens(1));
  w.advance(3_590_000); // inside the margin, timer not fired
  t.equal(await w.session.accessToken(), 'at-2');
  t.equal(w.calls.length, 1);
});

t.test('concurrent callers share one refresh (a rotated refresh token must never be sent twice)', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const w = world(async (_, n) => {
    await gate;
    return json(200, tokens(n + 1));
  });
  w.session.accept(tokens(1));
  w.advance(3_600_000);
  const all = Promise.all([w.session.accessToken(), w.session.accessToken(), w.session.refresh()]);
  release();
  t.same(await all, ['at-2', 'at-2', 'at-2']);
  t.equal(w.calls.length, 1);
});

t.test("a refused refresh ends the session with the server's reason", async (t) => {
  const w = world(() => json(400, { error: 'invalid_grant', error_description: 'The refresh token was revoked.' }));
  w.session.accept(tokens(1));
  await t.rejects(w.session.refresh(), {
    name: 'ApiProblem',
    status: 400,
    code: 'invalid_grant',
    detail: 'The refresh token was revoked.',
  });
  t.notOk(w.session.signedIn);
  t.same(w.signedOut, ['the session ended: The refresh token was revoked.']);
  await t.rejects(w.session.accessToken(), /Not signed in/);
});

t.test('a server error or a network failure keeps the session and retries soon', async (t) => {
  let mode: 'down' | '503' | 'ok' = 'down';
  const w = world((_, n) => {
    if (mode === 'down') throw new TypeError('fetch failed');
    if (mode === '503') return json(503, { error: 'temporarily_unavailable' });
    return json(200, tokens(n + 1));
  });
  w.session.accept(tokens(1));
  w.advance(3_540_000);
  w.fireDue();
  await flush();
  t.ok(w.session.signedIn, 'still signed in after a network failure');
  t.equal(w.timerAt, w.now + 5_000, 'retry in 5 s');
  mode = '503';
  w.advance(5_000);
  w.fireDue();
  await flush();
  t.ok(w.session.signedIn, 'still signed in after a 503');
  mode = 'ok';
  w.advance(5_000);
  w.fireDue();
  await flush();
  t.equal(await w.session.accessToken(), 'at-4');
  t.equal(
    w.calls.filter((c) => c.body.get('refresh_token') === 'rt-1').length,
    3,
    'the unspent refresh token was reused until it worked',
  );
  t.same(w.signedOut, []);
});

t.test('revoke sends the refresh token and signs out even when the server cannot be reached', async (t) => {
  const w = world(() => {
    throw new TypeError('fetch failed');
  });
  w.session.accept(tokens(1));
  await w.session.revoke('/oauth/revoke');
  t.same(Object.fromEntries(w.calls[0]!.body), { token: 'rt-1', client_id: 'cli_console' });
  t.equal(w.calls[0]!.url, '/oauth/revoke');
  t.notOk(w.session.signedIn);
  t.same(w.signedOut, ['you signed out']);
});
