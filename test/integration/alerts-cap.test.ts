import t from 'tap';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { isolatedConfig } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';

/**
 * Issue 49 item 5: alerts are capped per customer (ALERTS_MAX_PER_ACCOUNT, here 3): one more → 409
 * alert_limit_reached, nothing stored; creations at once never overshoot; a deleted alert frees its place.
 * Before: 2,956 alerts in 14 s, every one evaluated every pass.
 */
t.test('alerts per customer are capped', async (t) => {
  const config = await isolatedConfig(t, { ALERTS_MAX_PER_ACCOUNT: '3' });
  const api = await startApi(t, config);
  const a = await createTestAccount(api.infra, { name: 'Alerting Co' });
  const b = await createTestAccount(api.infra, { name: 'Racing Co' });
  const alert = (token: string, n: number) =>
    callJson(api.url, token, 'POST', '/v1/alerts', { metric: 'amount', currency: 'USD', thresholds: [n] });
  const made: string[] = [];
  for (let i = 1; i <= 3; i++) {
    const r = await alert(a.tokens.write, i);
    t.equal(r.status, 201, JSON.stringify(r.body));
    made.push(r.body.id);
  }
  const over = await alert(a.tokens.write, 4);
  t.equal(over.status, 409);
  t.equal(over.body.code, 'alert_limit_reached');
  t.equal((await callJson(api.url, a.tokens.read, 'GET', '/v1/alerts')).body.pagination.total, 3, 'nothing stored');
  t.equal((await callJson(api.url, a.tokens.write, 'DELETE', `/v1/alerts/${made[0]}`)).status, 204);
  t.equal((await alert(a.tokens.write, 5)).status, 201, 'a deleted alert frees its place');

  const raced = await Promise.all(Array.from({ length: 12 }, (_, i) => alert(b.tokens.write, i + 1)));
  t.same(raced.map((r) => r.status).sort(), [201, 201, 201, ...Array(9).fill(409)], '12 at once: exactly 3 created');
  t.equal((await callJson(api.url, b.tokens.read, 'GET', '/v1/alerts')).body.pagination.total, 3);
});
