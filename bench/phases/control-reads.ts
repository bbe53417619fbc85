import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createAccount } from '../../services/domain/accounts/store.js';
import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { issueAccessToken } from '../../shared/auth/access-tokens.js';
import { newId } from '../../shared/ids.js';
import type { BenchWorld } from '../world.js';

/**
 * control-reads (issue 45): the control plane's hot reads, each its own load of GETs beside the ceiling of the same
 * run — a product, a meter and a plan with the world's (customer) token, a customer with an operator's token (the
 * route is admin-only), and a boolean entitlement check. All but the check come from the api's read caches
 * (docs/architecture.md "Reads from memory"); the check from the entitlement table.
 */
export interface ControlRead {
  name: 'product' | 'meter' | 'plan' | 'customer' | 'check';
  url: string;
  headers: Record<string, string>;
}

export async function prepareControlReads(world: BenchWorld, apiUrl: string): Promise<ControlRead[]> {
  const customerToken = { authorization: `Bearer ${world.token}` };
  const pool = new pg.Pool({ connectionString: world.config.DATABASE_URL, max: 2 });
  try {
    const op = await createAccount(pool, {
      name: 'Bench reads operator',
      email: `reads-operator-${world.name}@example.com`,
      password: randomBytes(12).toString('hex'),
      operator: true,
    });
    const keys = new SigningKeys(pool, world.config.SECRET_KEY);
    await keys.load();
    const { token } = await issueAccessToken(
      keys,
      { accountId: op.account_id, userId: op.user_id, clientId: 'cli_bench_operator', scopes: ['admin'] },
      { issuer: world.config.PUBLIC_BASE_URL, ttlSeconds: 6 * 3600 },
    );
    const admin = { authorization: `Bearer ${token}` };
    const made = async (path: string, body: unknown) => {
      const r = await fetch(`${apiUrl}${path}`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await r.json()) as { id: string };
      if (r.status !== 201) throw new Error(`control-reads set-up: POST ${path} → ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    const plan = await made('/v1/plans', {
      name: 'Bench plan',
      currency: 'USD',
      interval: 'month',
      items: [{ product_id: world.productId }],
    });
    const customer = await made('/v1/customers', { name: 'Bench reader', external_id: `bench-reader-${world.name}` });
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM accounts WHERE customer_id = $1', [customer.id]);
    await pool.query(
      `INSERT INTO entitlements (id, account_id, feature, type) VALUES ($1, $2, 'bench.reads', 'boolean')`,
      [newId('ent'), rows[0]!.id],
    );
    const reads: ControlRead[] = [
      { name: 'product', url: `${apiUrl}/v1/products/${world.productId}`, headers: customerToken },
      { name: 'meter', url: `${apiUrl}/v1/meters/${world.meterId}`, headers: customerToken },
      { name: 'plan', url: `${apiUrl}/v1/plans/${plan.id}`, headers: customerToken },
      { name: 'customer', url: `${apiUrl}/v1/customers/${customer.id}`, headers: admin },
      {
        name: 'check',
        url: `${apiUrl}/v1/entitlements/check?feature=bench.reads&customer=${customer.id}`,
        headers: admin,
      },
    ];
    // Every read answers 200 before its load (the entitlement table reloads within its refresh).
    for (const read of reads) {
      for (let tries = 0; ; tries++) {
        const r = await fetch(read.url, { headers: read.headers });
        await r.arrayBuffer();
        if (r.status === 200) break;
        if (tries > 100) throw new Error(`control-reads: ${read.name} answers ${r.status}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    return reads;
  } finally {
    await pool.end();
  }
}
