import t from 'tap';
import { lookup as systemResolve } from 'node:dns/promises';
import { hostname } from 'node:os';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { isPublicAddress, type AddressLookup } from '../../services/domain/webhooks/url-safety.js';
import { emit, settledAttempt, startDispatcher } from './webhook-delivery-helpers.js';

/**
 * SSRF at delivery time. Names are resolved by an injected resolver (DeliveryOptions.lookup) standing in for
 * DNS: the test needs no network and no /etc/hosts edits, and a name it maps cannot be resolved by the system
 * resolver at all — so a request that arrives proves the socket went to the address the check returned.
 */
const NAMES: Record<string, { address: string; family: number }[]> = {
  'loopback.test': [{ address: '127.0.0.1', family: 4 }],
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'v6loopback.test': [{ address: '::1', family: 6 }],
  'mixed.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.7', family: 4 },
  ],
  'receiver.test': [{ address: '127.0.0.1', family: 4 }],
};
const lookup: AddressLookup = async (host) => {
  const answers = NAMES[host];
  if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answers;
};

t.test(
  'without WEBHOOKS_ALLOW_PRIVATE_URLS, names resolving to non-public addresses are refused and nothing is sent',
  async (t) => {
    const config = await isolatedConfig(t, { WEBHOOKS_ALLOW_PRIVATE_URLS: 'false' });
    const api = await startApi(t, config);
    const dispatcher = await startDispatcher(t, config, { delivery: { lookup } });
    const receiver = await startReceiver(t);
    const a = await createTestAccount(api.infra);
    const cases: [string, string][] = [
      [
        `https://loopback.test:${receiver.port}/hook`,
        'refused: host loopback.test resolves to non-public address 127.0.0.1',
      ],
      [
        `https://metadata.test:${receiver.port}/latest/meta-data`,
        'refused: host metadata.test resolves to non-public address 169.254.169.254',
      ],
      [
        `https://v6loopback.test:${receiver.port}/hook`,
        'refused: host v6loopback.test resolves to non-public address ::1',
      ],
      [`https://mixed.test:${receiver.port}/hook`, 'refused: host mixed.test resolves to non-public address 10.0.0.7'],
    ];
    const hooks: { id: string; why: string }[] = [];
    for (const [url, why] of cases) {
      const res = await callJson(api.url, a.tokens.write, 'POST', '/v1/webhooks', { url, events: ['invoice.paid'] });
      t.equal(res.status, 201, `${url} is accepted at registration (a name; its addresses are checked at delivery)`);
      hooks.push({ id: res.body.id, why });
    }
    // A row registered before IPv4-mapped addresses were refused at registration (issue 16 item 7).
    const mapped = await callJson(api.url, a.tokens.write, 'POST', '/v1/webhooks', {
      url: 'https://example.com/placeholder',
      events: ['invoice.paid'],
    });
    await api.infra.pg.query('UPDATE webhooks SET url = $2 WHERE id = $1', [
      mapped.body.id,
      `https://[::ffff:127.0.0.1]:${receiver.port}/hook`,
    ]);
    hooks.push({ id: mapped.body.id, why: 'refused: address ::ffff:7f00:1 is not public' });

    const id = await emit(api.infra, a.accountId, 'invoice.paid', {
      invoice_id: 'inv_ssrf',
      amount: 1,
      currency: 'USD',
    });
    for (const h of hooks) {
      const row = await settledAttempt(dispatcher.infra, h.id, id, 1);
      t.match(row, { status: 'failed', response_status: null, error: h.why }, h.why);
      t.ok(row.next_attempt_at, 'retried later (DNS may change), refused again then');
    }
    t.equal(receiver.connections, 0, 'no connection reached the receiver listening on 127.0.0.1');
    const refused = (
      await dispatcher.infra.metrics.registry.getSingleMetric('meterline_webhook_attempts_total')!.get()
    ).values.find((v) => v.labels.outcome === 'refused');
    t.equal(refused?.value, hooks.length, 'each refusal counted (and logged with its reason)');
  },
);

t.test('the socket connects to the address that was checked, never resolving the name again', async (t) => {
  const config = await isolatedConfig(t); // private targets allowed: the check passes 127.0.0.1
  const api = await startApi(t, config);
  const dispatcher = await startDispatcher(t, config, { delivery: { lookup } });
  const receiver = await startReceiver(t);
  const a = await createTestAccount(api.infra);
  const res = await callJson(api.url, a.tokens.write, 'POST', '/v1/webhooks', {
    url: `http://receiver.test:${receiver.port}/hook`,
    events: ['invoice.paid'],
  });
  const id = await emit(api.infra, a.accountId, 'invoice.paid', {
    invoice_id: 'inv_pinned',
    amount: 1,
    currency: 'USD',
  });
  const row = await settledAttempt(dispatcher.infra, res.body.id, id, 1);
  t.match(row, { status: 'succeeded', response_status: 200 });
  await waitUntil(() => receiver.at('/hook').length === 1, 'the request at the receiver');
  t.equal(
    receiver.at('/hook')[0]!.headers.host,
    `receiver.test:${receiver.port}`,
    'the Host header names the URL’s host',
  );
  const unknown = await callJson(api.url, a.tokens.write, 'POST', '/v1/webhooks', {
    url: 'http://nowhere.test/hook',
    events: ['invoice.created'],
  });
  const id2 = await emit(api.infra, a.accountId, 'invoice.created', {
    invoice_id: 'inv_nowhere',
    amount: 1,
    currency: 'USD',
  });
  t.match(await settledAttempt(dispatcher.infra, unknown.body.id, id2, 1), {
    status: 'failed',
    error: 'refused: host nowhere.test did not resolve (ENOTFOUND)',
  });
});

t.test('at registration, a name that already resolves to a non-public address is refused (422 on url)', async (t) => {
  const config = await isolatedConfig(t, { WEBHOOKS_ALLOW_PRIVATE_URLS: 'false' });
  const api = await startApi(t, config);
  const a = await createTestAccount(api.infra);
  // This machine's own name, resolved by the system resolver as the api will (/etc/hosts maps it to a loopback or
  // private address on the machines we run on): the expectation follows what it really resolves to.
  const host = hostname();
  const answers = await systemResolve(host, { all: true }).catch(() => []);
  const inside = answers.find((x) => !isPublicAddress(x.address));
  t.ok(answers.length > 0, `${host} resolves here`);
  const created = await callJson(api.url, a.tokens.write, 'POST', '/v1/webhooks', {
    url: `https://${host}/hook`,
    events: ['invoice.paid'],
  });
  if (inside) {
    t.equal(created.status, 422);
    t.match(created.body.errors, [
      {
        field: 'url',
        message: `must not point to a private, loopback, link-local or reserved address (${host} resolves to ${inside.address})`,
      },
    ]);
  } else t.equal(created.status, 201, `${host} resolves to public addresses only`);
  // The same rule when the URL of an existing webhook is changed.
  const hook = await callJson(api.url, a.tokens.write, 'POST', '/v1/webhooks', {
    url: 'https://example.com/hook',
    events: ['invoice.paid'],
  });
  t.equal(hook.status, 201, 'a public (or not yet resolvable) name is accepted; delivery checks it again');
  const patched = await callJson(api.url, a.tokens.write, 'PATCH', `/v1/webhooks/${hook.body.id}`, {
    url: `https://${host}/other`,
  });
  t.equal(patched.status, inside ? 422 : 200);
  const rows = await api.infra.pg.query('SELECT url FROM webhooks WHERE account_id = $1 ORDER BY created_at', [
    a.accountId,
  ]);
  t.same(
    rows.rows.map((r) => r.url),
    inside ? ['https://example.com/hook'] : [`https://${host}/hook`, `https://${host}/other`],
    'nothing refused was stored',
  );
});
