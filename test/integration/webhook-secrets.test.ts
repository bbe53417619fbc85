import t from 'tap';
import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { checkRequest, emit, settledAttempt, startDispatcher } from './webhook-delivery-helpers.js';

/**
 * Standard Webhooks secrets (docs/design.md §9): a receiver verifies a delivery with the `standardwebhooks`
 * library and the secret exactly as meterline gave it — no base64 step of its own — through the real api,
 * dispatcher and a local receiver. Secrets of another form keep the rule they had.
 */
t.test('Standard Webhooks secrets', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const { infra } = await startDispatcher(t, config);
  const receiver = await startReceiver(t);
  const a = await createTestAccount(api.infra);
  const register = async (path: string, secret?: string) => {
    const res = await callJson(api.url, a.tokens.write, 'POST', '/v1/webhooks', {
      url: receiver.url(path),
      events: ['invoice.paid'],
      ...(secret ? { secret } : {}),
    });
    if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body.id as string, secret: secret ?? (res.body.secret as string) };
  };

  const generated = await register('/generated');
  t.match(generated.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'generated: whsec_ + padded standard base64');
  // A caller's own whsec_ secret in standard base64 follows the same rule as a generated one.
  const ownStandard = await register(
    '/own',
    `whsec_${Buffer.from('a receiver-chosen key of 32 byte').toString('base64')}`,
  );
  // The base64url form generated before (43 characters, '-' and '_') and free text: their UTF-8 bytes, as before.
  const legacy = await register('/legacy', 'whsec_o3jYQf_WmwcKP8lb4u7L7YvD2XwQ4x-Ikt4MwzCQk6Y');
  const text = await register('/text', 'a plain text secret of mine');

  const id = await emit(api.infra, a.accountId, 'invoice.paid', { invoice_id: 'inv_std', amount: 1, currency: 'USD' });
  for (const hook of [generated, ownStandard, legacy, text]) await settledAttempt(infra, hook.id, id, 1);
  const got = (path: string) => receiver.at(path).find((r) => r.headers['webhook-id'] === id)!;
  const verify = (path: string, secret: string) => () =>
    new StandardWebhook(secret).verify(got(path).body.toString(), got(path).headers as Record<string, string>);

  t.doesNotThrow(verify('/generated', generated.secret), 'generated: new Webhook(secret), the secret as given');
  t.doesNotThrow(verify('/own', ownStandard.secret), 'own whsec_<base64>: as given');
  t.equal(
    got('/generated').headers['x-webhook-signature'],
    createHmac('sha256', generated.secret).update(got('/generated').body).digest('hex'),
    'X-Webhook-Signature unchanged: hex HMAC keyed with the secret text',
  );
  for (const [path, secret] of [
    ['/legacy', legacy.secret],
    ['/text', text.secret],
  ] as const) {
    t.doesNotThrow(verify(path, Buffer.from(secret).toString('base64')), `${path}: keyed with its UTF-8 bytes`);
    t.same(checkRequest(got(path), secret).problems, [], `${path}: both headers verify`);
  }
  t.same(checkRequest(got('/generated'), generated.secret).problems, []);

  // Rotation hands out a secret of the same form: a receiver pastes it as given too.
  const rotated = await callJson(api.url, a.tokens.write, 'POST', `/v1/webhooks/${generated.id}/rotate-secret`);
  t.match(rotated.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const next = await emit(api.infra, a.accountId, 'invoice.paid', {
    invoice_id: 'inv_std2',
    amount: 1,
    currency: 'USD',
  });
  await settledAttempt(infra, generated.id, next, 1);
  const r = receiver.at('/generated').find((x) => x.headers['webhook-id'] === next)!;
  for (const [secret, which] of [
    [rotated.body.secret as string, 'the new secret'],
    [generated.secret, 'the previous one, during the overlap'],
  ])
    t.doesNotThrow(
      () => new StandardWebhook(secret).verify(r.body.toString(), r.headers as Record<string, string>),
      `${which}, as given`,
    );
});
