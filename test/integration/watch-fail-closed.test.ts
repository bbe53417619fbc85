import t from 'tap';
import { Kvm } from '@nats-io/kv';
import { jetstreamManager } from '@nats-io/jetstream';
import { decodeJwt } from 'jose';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { ensureNatsTopology } from '../../shared/migrate.js';
import { putMeter } from '../../shared/meters/record.js';
import { publishRevocations } from '../../shared/auth/revocations.js';
import { createMeter, iso, postJson, startUsageApi } from './ingest-helpers.js';

/**
 * The revocation list and the meter registry are NATS KV buckets watched into memory. A watch that breaks
 * (here: its bucket deleted under it — a nats.js watch then goes quiet without ending) must not leave the
 * process serving from a copy it can no longer vouch for: after WATCH_MAX_STALENESS_SECONDS (1 s here) the
 * ingress answers 503 and /readyz says why; once the bucket is back the watch is re-established and changes
 * written after that (a revocation) take effect.
 */
t.test('broken KV watches fail closed and are re-established', async (t) => {
  const config = await isolatedConfig(t, { WATCH_MAX_STALENESS_SECONDS: '1' });
  const api = await startUsageApi(t, config);
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const meter = await createMeter(infra, acct.accountId);
  const jsm = await jetstreamManager(infra.nats);
  const names = infra.natsNames;
  const post = () =>
    postJson(api.url, `/v1/meters/${meter.id}/usage`, acct.auth.write.authorization, {
      value: 1,
      timestamp: iso(Date.now()),
    });
  const readyz = async () => {
    const res = await fetch(`${api.url}/readyz`);
    return { status: res.status, text: await res.text() };
  };
  const restoreBuckets = async () => {
    await ensureNatsTopology(infra.nats, names, config.USAGE_STREAM_MAX_BYTES);
    await putMeter(await new Kvm(infra.nats).open(names.meterBucket), {
      id: meter.id,
      account_id: acct.accountId,
      type: meter.type,
      aggregation: meter.aggregation,
      status: 'active',
      updated_at_ms: Date.now(),
    });
  };

  t.equal((await post()).status, 202, 'ingest works while both watches are current');

  await t.test('meter registry', async (t) => {
    await jsm.streams.delete(`KV_${names.meterBucket}`);
    await waitUntil(
      async () => (await post()).status === 503,
      'ingest refuses once the registry cannot be confirmed',
      60_000,
    );
    const refused = await post();
    t.equal(refused.body.code, 'unavailable');
    t.match(refused.body.detail, /meter registry/);
    t.match(refused.headers.get('retry-after'), /^\d+$/);
    const ready = await readyz();
    t.equal(ready.status, 503);
    t.match(ready.text, /meter registry/);
    await restoreBuckets();
    await waitUntil(
      async () => (await post()).status === 202,
      'the watch is re-established and ingest accepts again',
      60_000,
    );
    await waitUntil(async () => (await readyz()).status === 200, 'ready again', 60_000);
  });

  await t.test('revocation list', async (t) => {
    await jsm.streams.delete(`KV_${names.revocationBucket}`);
    await waitUntil(
      async () => (await post()).status === 503,
      'tokens are refused once revocations cannot be confirmed',
      60_000,
    );
    const refused = await post();
    t.equal(refused.body.code, 'unavailable');
    t.match(refused.body.detail, /revocations/);
    t.match((await readyz()).text, /revocations/);
    await restoreBuckets();
    await waitUntil(
      async () => (await post()).status === 202,
      'the token is accepted again once the watch is back',
      60_000,
    );
    const jti = decodeJwt(acct.tokens.write).jti!;
    await publishRevocations(await new Kvm(infra.nats).open(names.revocationBucket), [
      { jti, exp: Math.floor(Date.now() / 1000) + 3600 },
    ]);
    await waitUntil(
      async () => (await post()).status === 401,
      'a revocation written after the re-established watch is enforced',
      60_000,
    );
  });
});
