import t from 'tap';
import { ApiClient, withDecimal, withQuery } from '../../services/console/web/src/lib/api.js';
import { describeError, problemFromResponse } from '../../services/console/web/src/lib/problem.js';
import { readCallback, s256, beginSignIn, type PendingSignIn } from '../../services/console/web/src/lib/oauth.js';
import { chartSeries, defaultRange, rangeProblem } from '../../services/console/web/src/lib/usage.js';
import { formatMoney, formatPeriod } from '../../services/console/web/src/lib/format.js';
import { TokenSession } from '../../services/console/web/src/lib/tokens.js';
import { s256Challenge } from '../../shared/auth/pkce.js';

/** The console's API client, error display, OAuth helpers and chart maths (services/console/web/src/lib/). */
const problem = (status: number, body: object) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/problem+json', 'x-request-id': 'req-1' },
  });

t.test('problems: the detail, the fields, the code and the request id are what the page shows', async (t) => {
  const p = await problemFromResponse(
    problem(422, {
      type: 'about:blank',
      title: 'Unprocessable',
      status: 422,
      detail: 'card.number: fails the Luhn check',
      code: 'validation_failed',
      errors: [{ field: 'card.number', message: 'fails the Luhn check' }],
      request_id: 'req-9',
    }),
  );
  t.same(describeError(p), {
    message: 'card.number: fails the Luhn check',
    fields: [{ field: 'card.number', message: 'fails the Luhn check' }],
    code: 'validation_failed',
    requestId: 'req-9',
  });

  const oauth = await problemFromResponse(
    new Response(JSON.stringify({ error: 'invalid_grant', error_description: 'The code was already used.' }), {
      status: 400,
    }),
  );
  t.equal(oauth.detail, 'The code was already used.');
  t.equal(oauth.code, 'invalid_grant');

  const html = await problemFromResponse(
    new Response('<html>Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
  );
  t.equal(
    html.detail,
    'The server answered 502 Bad Gateway: <html>Bad Gateway</html>.',
    'a proxy page still says something',
  );
  t.equal(html.code, 'http_502');

  const empty = await problemFromResponse(new Response('', { status: 500 }));
  t.match(empty.detail, /answered 500/);

  t.match(describeError(new TypeError('Failed to fetch')).message, /could not be reached \(Failed to fetch\)/);
  t.equal(describeError(new Error('boom')).message, 'boom');
  t.equal(describeError('odd').message, 'Unexpected error: odd');
});

function clientWith(script: (req: { url: string; init: RequestInit }) => Response, refreshed: string[] = []) {
  const session = new TokenSession({
    tokenEndpoint: '/oauth/token',
    clientId: 'cli_console',
    fetch: async () => {
      refreshed.push('refresh');
      return new Response(
        JSON.stringify({
          access_token: `at-${refreshed.length + 1}`,
          token_type: 'Bearer',
          expires_in: 3600,
          refresh_token: 'rt-2',
          scope: 'read',
        }),
        { status: 200 },
      );
    },
    setTimer: () => 0 as unknown as ReturnType<typeof setTimeout>,
    clearTimer: () => undefined,
  });
  session.accept({
    access_token: 'at-1',
    token_type: 'Bearer',
    expires_in: 3600,
    refresh_token: 'rt-1',
    scope: 'read',
  });
  const seen: { url: string; init: RequestInit }[] = [];
  const api = new ApiClient(session, 'http://api', async (url, init) => {
    seen.push({ url, init: init! });
    return script({ url, init: init! });
  });
  return { api, seen, refreshed };
}

t.test('api client: bearer token, JSON in and out, problems thrown with their detail', async (t) => {
  const { api, seen } = clientWith(({ url }) =>
    url.endsWith('/v1/meters')
      ? new Response(JSON.stringify({ id: 'mtr_1' }), { status: 201 })
      : problem(404, { detail: 'No meter mtr_x.', code: 'not_found', status: 404 }),
  );
  t.same(await api.post('/v1/meters', { name: 'm' }), { id: 'mtr_1' });
  t.equal((seen[0]!.init.headers as Record<string, string>).authorization, 'Bearer at-1');
  t.equal(seen[0]!.init.body, '{"name":"m"}');
  await t.rejects(api.get('/v1/meters/mtr_x'), {
    name: 'ApiProblem',
    message: 'No meter mtr_x.',
    status: 404,
    code: 'not_found',
    detail: 'No meter mtr_x.',
    requestId: 'req-1',
  });
});

t.test('api client: a 401 refreshes once and retries; a second 401 is shown', async (t) => {
  let n = 0;
  const refreshed: string[] = [];
  const { api, seen } = clientWith(
    () =>
      ++n === 1
        ? problem(401, { detail: 'The token was revoked.', code: 'unauthorized' })
        : new Response('{"ok":true}', { status: 200 }),
    refreshed,
  );
  t.same(await api.get('/v1/meters'), { ok: true });
  t.equal(refreshed.length, 1);
  t.equal(
    (seen[1]!.init.headers as Record<string, string>).authorization,
    'Bearer at-2',
    'retried with the refreshed token',
  );

  const always = clientWith(() => problem(401, { detail: 'Invalid token.', code: 'unauthorized' }));
  await t.rejects(always.api.get('/v1/meters'), { name: 'ApiProblem', message: 'Invalid token.', status: 401 });
  t.equal(always.seen.length, 2, 'one retry, no loop');
});

t.test('api client: downloads keep the file name; 204 has no body; a non-JSON 200 is an error', async (t) => {
  const { api } = clientWith(({ url }) => {
    if (url.endsWith('/download'))
      return new Response('%PDF-1.3', {
        status: 200,
        headers: { 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="inv_1.pdf"' },
      });
    if (url.includes('/v1/products/')) return new Response(null, { status: 204 });
    return new Response('<html>', { status: 200 });
  });
  const file = await api.download('/v1/billing/invoices/inv_1/download');
  t.equal(file.filename, 'inv_1.pdf');
  t.equal(await file.blob.text(), '%PDF-1.3');
  t.equal(await api.delete('/v1/products/prod_1'), undefined);
  await t.rejects(api.get('/v1/odd'), { code: 'malformed_response' });
});

t.test('exact prices: the digits typed go into the JSON unchanged', async (t) => {
  t.equal(
    withDecimal({ name: 'Storage', currency: 'USD' }, 'price', '0.000000001').text,
    '{"name":"Storage","currency":"USD","price":0.000000001}',
  );
  t.equal(
    withDecimal({}, 'price', ' 12345678901234567890.123456789 ').text,
    '{"price":12345678901234567890.123456789}',
  );
  t.throws(() => withDecimal({}, 'price', '1e3'), /price: enter a number/);
  t.throws(() => withDecimal({}, 'price', '0.0000000001'), /at most 9 decimals/);
  t.equal(withQuery('/v1/meters', { status: '', page: 2, per_page: undefined }), '/v1/meters?page=2');
});

t.test('sign-in: PKCE S256 as the server checks it; state and issuer are verified', async (t) => {
  const settings = {
    client_id: 'cli_console',
    redirect_uri: 'http://127.0.0.1:8080/console',
    issuer: 'http://127.0.0.1:8080',
  };
  const { url, pending } = await beginSignIn(settings, 'http://127.0.0.1:8080/oauth/authorize', '#/invoices');
  const q = new URL(url).searchParams;
  t.equal(q.get('code_challenge'), s256Challenge(pending.verifier), 'the server would accept the verifier');
  t.equal(await s256(pending.verifier), q.get('code_challenge'));
  t.same(
    [q.get('client_id'), q.get('redirect_uri'), q.get('code_challenge_method'), q.get('scope'), q.get('state')],
    ['cli_console', settings.redirect_uri, 'S256', 'read write admin', pending.state],
  );
  t.match(pending.verifier, /^[A-Za-z0-9_-]{64}$/);

  const ok = (p: PendingSignIn | undefined, search: string) => readCallback(search, p, settings.issuer);
  const iss = encodeURIComponent(settings.issuer);
  t.same(ok(pending, ''), { kind: 'none' });
  t.same(ok(pending, `?code=abc&state=${pending.state}&iss=${iss}`), { kind: 'code', code: 'abc' });
  t.match(ok(pending, `?code=abc&state=other&iss=${iss}`), { kind: 'error', message: /state mismatch/ });
  t.match(ok(undefined, `?code=abc&state=${pending.state}&iss=${iss}`), { kind: 'error', message: /state mismatch/ });
  t.match(ok(pending, `?code=abc&state=${pending.state}&iss=https%3A%2F%2Fevil.example`), {
    kind: 'error',
    message: /came from https:\/\/evil\.example/,
  });
  t.match(ok(pending, `?error=access_denied&state=${pending.state}&iss=${iss}`), {
    kind: 'error',
    message: 'Access was denied on the consent page.',
  });
});

t.test('usage ranges and the chart series', async (t) => {
  const now = Date.parse('2026-11-23T10:30:00Z');
  t.same(defaultRange(now), { start_date: '2026-11-22', end_date: '2026-11-23', window: 'hour' });
  t.equal(
    rangeProblem({ start_date: '2026-11-23', end_date: '2026-11-22', window: 'day' }),
    'The start date is after the end date.',
  );
  t.match(rangeProblem({ start_date: '2026-11-01', end_date: '2026-11-23', window: 'hour' }), /at most 7 days/);
  t.equal(rangeProblem({ start_date: '2026-11-01', end_date: '2026-11-23', window: 'day' }), null);
  t.match(rangeProblem({ start_date: '2025-01-01', end_date: '2026-11-23', window: 'day' }), /at most 366 days/);
  t.equal(rangeProblem({ start_date: '', end_date: '2026-11-23', window: 'day' }), 'Pick a start and an end date.');
  const series = chartSeries({
    meter_id: 'mtr_1',
    type: 'gauge',
    aggregation: 'max',
    unit: 'u',
    start_date: '2026-11-23',
    end_date: '2026-11-23',
    window: 'hour',
    value: 3,
    count: 1,
    data: [
      { start: '2026-11-23T00:00:00.000Z', end: '2026-11-23T01:00:00.000Z', value: null, count: 0 },
      { start: '2026-11-23T01:00:00.000Z', end: '2026-11-23T02:00:00.000Z', value: 3, count: 1 },
    ],
  });
  t.same(
    series,
    { labels: ['11-23 00:00', '11-23 01:00'], values: [null, 3] },
    'an empty gauge window is a gap, not a zero',
  );
});

t.test("money display: minor units, never hiding a unit price's decimals", async (t) => {
  t.equal(formatMoney(1234.5, 'USD'), '1,234.50 USD');
  t.equal(formatMoney(1234000, 'JPY'), '1,234,000 JPY');
  t.equal(formatMoney(1.5, 'KWD'), '1.500 KWD');
  t.equal(formatMoney(0.000000001, 'USD'), '0.000000001 USD');
  t.equal(formatMoney(0.002, 'usd'), '0.002 USD'.replace('USD', 'usd'));
});

t.test('periods read as inclusive days, whether the API sends an exclusive instant or an inclusive date', async (t) => {
  t.equal(formatPeriod('2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'), '2026-11-01 → 2026-11-30');
  t.equal(formatPeriod('2026-10-01', '2026-10-31'), '2026-10-01 → 2026-10-31');
});
