import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { startApiProcess } from '../fixtures/api-process.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { createCustomers, customerToken } from '../fixtures/operator.js';

/**
 * Control-plane reads from memory (issue 45 item 1, docs/architecture.md "Reads from memory"): two api processes
 * over one database — A writes, B (its own Node process) answers reads from its caches. For each cached kind, B
 * answers the second read from memory; after a change — through A's API, or straight in Postgres as any other
 * process would make it — every read of B that starts 1 s after the writer's 2xx shows the change, and A itself
 * shows it at once (its own write cleared its caches). A customer's cached meter stays 404 to another customer.
 */
const BOUND_MS = 1_000;

t.test('two api processes: cached reads never stale past the writer’s 2xx + 1 s', async (t) => {
  const config = await isolatedConfig(t);
  const a = await startApi(t, config);
  const b = await startApiProcess(t, config);
  const operator = await createTestAccount(a.infra, { operator: true });
  const ADMIN = operator.tokens.admin;
  const [alice, bob] = await createCustomers(a.url, ADMIN, 2, 'readcache');
  const ALICE = await customerToken(a.infra, alice!.accountId);
  const BOB = await customerToken(a.infra, bob!.accountId);
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await callJson(a.url, token, method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const product = (await made(ADMIN, 'POST', '/v1/products', { name: 'Seat', price: 10, currency: 'USD' })).id;
  const sharedMeter = (
    await made(ADMIN, 'POST', '/v1/meters', { name: 'Calls', unit: 'calls', aggregation: 'sum', scope: 'deployment' })
  ).id;
  const ownMeter = (await made(ALICE, 'POST', '/v1/meters', { name: 'Mine', unit: 'calls', aggregation: 'sum' })).id;
  const plan = (
    await made(ADMIN, 'POST', '/v1/plans', {
      name: 'Team',
      currency: 'USD',
      interval: 'month',
      items: [{ product_id: product }],
    })
  ).id;
  const coupon = (await made(ADMIN, 'POST', '/v1/coupons', { name: 'SPRING', percent_off: 10, duration: 'once' })).id;
  const taxRate = (await made(ADMIN, 'POST', '/v1/tax_rates', { name: 'VAT', percentage: 20, inclusive: false })).id;

  const memoryReads = async (url: string) => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^meterline_read_cache_reads\{kind="(\w+)",source="memory"[^}]*\} (\d+)/gm))
      out[m[1]!] = Number(m[2]);
    return out;
  };

  const cases: {
    kind: string;
    token: string;
    path: string;
    show: (body: any) => unknown;
    change: () => Promise<unknown>;
    changed: unknown;
    /** Changed outside the api processes (A then learns of it at its poll, like B). */
    outside?: boolean;
  }[] = [
    {
      kind: 'products',
      token: ALICE,
      path: `/v1/products/${product}`,
      show: (p) => p.name,
      change: () => made(ADMIN, 'PATCH', `/v1/products/${product}`, { name: 'Seat (2)' }),
      changed: 'Seat (2)',
    },
    {
      kind: 'meters',
      token: ALICE,
      path: `/v1/meters/${ownMeter}`,
      show: (m) => m.name,
      change: () => made(ALICE, 'PATCH', `/v1/meters/${ownMeter}`, { name: 'Mine (2)' }),
      changed: 'Mine (2)',
    },
    {
      kind: 'meters',
      token: BOB,
      path: `/v1/meters/${sharedMeter}`,
      show: (m) => m.name,
      change: () => made(ADMIN, 'PATCH', `/v1/meters/${sharedMeter}`, { name: 'Calls (2)' }),
      changed: 'Calls (2)',
    },
    {
      kind: 'plans',
      token: ALICE,
      path: `/v1/plans/${plan}`,
      show: (p) => p.version,
      change: () =>
        made(ADMIN, 'POST', `/v1/plans/${plan}/versions`, { items: [{ product_id: product, quantity: 2 }] }),
      changed: 2,
    },
    {
      // Changed straight in Postgres, as a process other than either api would (the CLI, the billing role).
      kind: 'coupons',
      token: ADMIN,
      path: `/v1/coupons/${coupon}`,
      show: (c) => c.times_redeemed,
      change: () => a.infra.pg.query('UPDATE coupons SET times_redeemed = times_redeemed + 1 WHERE id = $1', [coupon]),
      changed: 1,
      outside: true,
    },
    {
      kind: 'tax_rates',
      token: ADMIN,
      path: `/v1/tax_rates/${taxRate}`,
      show: (r) => r.archived,
      change: () => made(ADMIN, 'POST', `/v1/tax_rates/${taxRate}/archive`),
      changed: true,
    },
    {
      kind: 'customers',
      token: ADMIN,
      path: `/v1/customers/${alice!.id}`,
      show: (c) => c.name,
      change: () => made(ADMIN, 'PATCH', `/v1/customers/${alice!.id}`, { name: 'Alice (2)' }),
      changed: 'Alice (2)',
    },
  ];

  const before = await memoryReads(b.url);
  for (const c of cases) {
    await t.test(`${c.kind}: ${c.path}`, async (t) => {
      const read = async (url: string) => {
        const r = await callJson(url, c.token, 'GET', c.path);
        t.equal(r.status, 200, `${c.path} → ${JSON.stringify(r.body)}`);
        return c.show(r.body);
      };
      // Both processes hold the old answer (read twice: the second from memory).
      const old = await read(b.url);
      t.not(old, c.changed);
      t.equal(await read(b.url), old);
      t.equal(await read(a.url), old);
      t.equal(await read(a.url), old);

      await c.change();
      // The 2xx (or the COMMIT) is in: from here the bound runs.
      const acked = performance.now();
      if (!c.outside) t.same(await read(a.url), c.changed, 'the writer’s process answers the change at once');
      // Read B back to back until past the bound: every read started after it shows the change.
      const seen: { startedMs: number; value: unknown }[] = [];
      while (performance.now() - acked < BOUND_MS + 300) {
        const startedMs = performance.now() - acked;
        seen.push({ startedMs, value: await read(b.url) });
        await new Promise((r) => setTimeout(r, 25));
      }
      const late = seen.filter((s) => s.startedMs >= BOUND_MS);
      t.ok(late.length > 0);
      t.same(
        late.filter((s) => s.value !== c.changed),
        [],
        `every read of the other process from ${BOUND_MS} ms after the 2xx shows the change`,
      );
    });
  }
  const after = await memoryReads(b.url);
  for (const kind of ['products', 'meters', 'plans', 'coupons', 'tax_rates', 'customers'])
    t.ok((after[kind] ?? 0) > (before[kind] ?? 0), `${kind}: the other process answered from memory`);

  await t.test('a customer’s cached meter stays 404 to another customer', async (t) => {
    t.equal((await callJson(b.url, ALICE, 'GET', `/v1/meters/${ownMeter}`)).status, 200);
    t.equal((await callJson(b.url, ALICE, 'GET', `/v1/meters/${ownMeter}`)).status, 200);
    t.equal((await callJson(b.url, BOB, 'GET', `/v1/meters/${ownMeter}`)).status, 404);
    t.equal((await callJson(b.url, ADMIN, 'GET', `/v1/meters/${ownMeter}`)).status, 200);
    t.equal((await callJson(b.url, BOB, 'GET', `/v1/customers/${alice!.id}`)).status, 403);
  });
});
