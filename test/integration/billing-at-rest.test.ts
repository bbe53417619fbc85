import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { isolatedConfig, testInfra } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { ApiService } from '../../services/roles/api/service.js';
import { createAuthenticator } from '../../services/roles/api/authenticator.js';

const PG_DUMP = '/usr/lib/postgresql/15/bin/pg_dump';

/**
 * Card numbers and CVCs are never stored, webhook secrets never in clear: after real API calls, a full
 * pg_dump of the database (schema + data) and every row of every table as text contain none of them,
 * and neither does anything the api logged at trace level.
 */
t.test('no card number, CVC or webhook secret is stored in clear or logged', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config, 'api');
  let logged = '';
  infra.log = pino(
    { level: 'trace' },
    new Writable({
      write(chunk, _enc, done) {
        logged += chunk.toString();
        done();
      },
    }),
  );
  const service = new ApiService(infra, undefined, await createAuthenticator(infra));
  await service.start();
  t.teardown(() => service.stop());
  const api = { url: `http://127.0.0.1:${service.port}`, infra };
  const a = await createTestAccount(api.infra);
  // Every POST carries an Idempotency-Key: saved replays must not become a copy of the secrets in clear.
  let keyCounter = 0;
  const post = async (path: string, body: unknown, key = `at-rest-${++keyCounter}`) => {
    const res = await fetch(api.url + path, {
      method: 'POST',
      headers: { ...a.auth.write, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const year = new Date().getUTCFullYear() + 4;
  const cards = [
    { typed: '4111 1111 1111 1111', digits: '4111111111111111', cvc: '7319' },
    { typed: '5105-1051-0510-5100', digits: '5105105105105100', cvc: '864' },
    { typed: '371449635398431', digits: '371449635398431', cvc: '5927' },
    { typed: '4000000000009995', digits: '4000000000009995', cvc: '6481' },
  ];
  for (const c of cards) {
    const res = await post('/v1/billing/payment-methods', {
      type: 'card',
      card: { number: c.typed, exp_month: 11, exp_year: year, cvc: c.cvc },
    });
    t.equal(res.status, 201, c.typed);
  }
  const declined = await post('/v1/billing/payment-methods', {
    type: 'card',
    card: { number: '4000000000000002', exp_month: 11, exp_year: year, cvc: '9173' },
  });
  t.equal(declined.status, 402);
  const invalid = await post('/v1/billing/payment-methods', {
    type: 'card',
    card: { number: '4111111111111112', exp_month: 13, exp_year: year, cvc: '4826' },
  });
  t.equal(invalid.status, 422);

  const supplied = 'my-very-own-signing-secret-b1f3e2';
  t.equal(
    (await post('/v1/webhooks', { url: 'https://example.com/a', events: ['invoice.paid'], secret: supplied })).status,
    201,
  );
  const generated = await post(
    '/v1/webhooks',
    { url: 'https://example.com/b', events: ['invoice.paid'] },
    'generated-secret-key',
  );
  t.equal(generated.status, 201);
  const generatedSecret = generated.body.secret as string;
  t.ok(generatedSecret.length >= 32);
  const replayed = await post(
    '/v1/webhooks',
    { url: 'https://example.com/b', events: ['invoice.paid'] },
    'generated-secret-key',
  );
  t.same(replayed.body, generated.body, 'the replay returns the first response, secret included, from its sealed copy');
  const rotated = 'rotated-secret-value-9d8c7b6a';
  const patch = await fetch(`${api.url}/v1/webhooks/${generated.body.id}`, {
    method: 'PATCH',
    headers: { ...a.auth.write, 'content-type': 'application/json' },
    body: JSON.stringify({ secret: rotated }),
  });
  t.equal(patch.status, 200);

  const { stdout: dump } = await promisify(execFile)(PG_DUMP, ['--no-owner', '--dbname', config.DATABASE_URL], {
    maxBuffer: 64 * 1024 * 1024,
  });
  t.match(dump, /COPY public\.payment_methods/, 'the dump holds the payment methods');
  t.match(dump, /COPY public\.webhooks/, 'and the webhooks');

  const rows: string[] = [];
  const tables = await api.infra.pg.query<{ schemaname: string; tablename: string }>(
    "SELECT schemaname, tablename FROM pg_tables WHERE schemaname = 'public'",
  );
  for (const { tablename } of tables.rows) {
    const r = await api.infra.pg.query(`SELECT t::text AS row FROM public."${tablename}" t`);
    rows.push(...r.rows.map((x) => `${tablename}: ${x.row}`));
  }
  t.ok(logged.length > 0, 'the api logged (trace level)');
  const everything = dump + '\n' + rows.join('\n') + '\n' + logged;

  // A CVC is short enough to occur inside random ids and hashes: look for it as a whole value.
  const asValue = (v: string) =>
    new RegExp(`(^|[\\s,:;"'(){}\\[\\]=|])${v}($|[\\s,:;"'(){}\\[\\]=|])`, 'm').test(everything);
  t.ok(
    asValue('1111') && asValue('8431') && asValue(String(year)),
    'what is kept (last4, expiry) is found as values: the matcher works',
  );
  for (const c of [
    ...cards,
    { typed: '4000000000000002', digits: '4000000000000002', cvc: '9173' },
    { typed: '4111111111111112', digits: '4111111111111112', cvc: '4826' },
  ]) {
    t.notOk(everything.includes(c.digits), `number ${c.digits.slice(-4)} not stored`);
    t.notOk(everything.includes(c.typed), `number as typed not stored`);
    t.notOk(asValue(c.cvc), `cvc of ${c.digits.slice(-4)} not stored as a value`);
  }
  t.notOk(/"cvc"|"number"/.test(everything), 'no stored JSON carries card fields');
  for (const s of [supplied, generatedSecret, rotated]) {
    t.notOk(everything.includes(s), `webhook secret ${s.slice(0, 8)}… not in clear`);
    t.notOk(everything.includes(Buffer.from(s).toString('base64')), 'nor base64-encoded');
    t.notOk(everything.includes(Buffer.from(s).toString('hex')), 'nor hex-encoded');
  }
});
