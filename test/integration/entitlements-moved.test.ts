import t from 'tap';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, waitForIngressMeter } from '../fixtures/matrix.js';
import { createCustomers, deploymentMeter } from '../fixtures/operator.js';
import { startConsumer } from './ingest-helpers.js';
import { encodeRow } from '../../shared/usage/wire.js';
import { readMessageRows } from '../../services/domain/usage/message-rows.js';
import { UsageWriter, type WriteOutcome } from '../../services/domain/usage/writer.js';

/**
 * The entitlement table's refresh under ingest (docs/entitlements.md "How the check is answered from memory"):
 * between full reads an api re-reads only the accounts the consumer signalled as moved. Two api processes read
 * in full only every 60 s, so what they show within seconds came through the signal; a third reads in full
 * every 2 s: the safety net for a signal lost — here usage stored by a writer that sends none.
 */
t.test('entitlement checks follow the usage moved signal', async (t) => {
  const config = await isolatedConfig(t, { ENTITLEMENT_FULL_REFRESH_SECONDS: '60' });
  const api = await startApi(t, config);
  const api2 = await startApi(t, config);
  const net = await startApi(t, { ...config, ENTITLEMENT_FULL_REFRESH_SECONDS: 2 });
  await startConsumer(t, config, { maxWaitMs: 100 });
  const operator = await createTestAccount(api.infra, { operator: true });
  const admin = operator.tokens.admin;
  const [a, c] = await createCustomers(api.url, admin, 2, 'moved');
  const meter = await deploymentMeter(api.url, admin, { name: 'calls', aggregation: 'sum' });
  await waitForIngressMeter(api.url, admin, meter.id);
  for (const customer of [a!, c!]) {
    const r = await callJson(api.url, admin, 'POST', '/v1/entitlements', {
      customer_id: customer.id,
      feature: 'calls',
      type: 'metered',
      meter_id: meter.id,
      limit: 1000,
      period: 'month',
    });
    t.equal(r.status, 201, 'entitlement created');
  }
  const usageOn = async (url: string, customer: string): Promise<number | undefined> => {
    const r = await callJson(url, admin, 'GET', `/v1/entitlements/check?feature=calls&customer=${customer}`);
    return r.status === 200 ? r.body.usage : undefined;
  };
  const apis = { api: api.url, api2: api2.url, net: net.url };
  // Loaded (a reload reads everything): from here on the first two read in full only in 60 s.
  for (const [name, url] of Object.entries(apis))
    for (const customer of [a!, c!])
      await waitUntil(async () => (await usageOn(url, customer.externalId)) === 0, `${name} loaded the entitlements`);

  let seq = 0;
  const send = async (customer: string, value: number) => {
    const record = { value, timestamp: new Date().toISOString(), id: `m-${++seq}`, customer };
    t.equal((await callJson(api.url, admin, 'POST', `/v1/meters/${meter.id}/usage`, [record])).status, 202);
    return Date.now();
  };
  /** Milliseconds until the check on `url` shows `usage` (at most 15 s, far below the 60-s full read). */
  const seenAfter = async (since: number, url: string, customer: string, usage: number) => {
    await waitUntil(async () => (await usageOn(url, customer)) === usage, `usage ${usage} on ${url}`, 15_000, 20);
    return Date.now() - since;
  };

  t.test('a record accepted by one api moves the check on both within seconds, by the signal', async (t) => {
    const accepted = await send(a!.externalId, 7);
    const [one, two] = await Promise.all([
      seenAfter(accepted, api.url, a!.externalId, 7),
      seenAfter(accepted, api2.url, a!.externalId, 7),
    ]);
    t.comment(`202 → check: ${one} ms on the accepting api, ${two} ms on the other`);
    t.ok(one < 5_000 && two < 5_000, 'well before the next full read (60 s)');
  });

  t.test('an account whose usage did not move is not read again; the full read brings it', async (t) => {
    // Usage of c stored as the consumer stores it, but by a writer that signals nothing: a lost signal.
    const infra = await testInfra(t, config, 'silent-writer');
    const writer = new UsageWriter<string>(infra, {
      maxOpenConnections: 2,
      sweepIntervalMs: 60_000,
      settleIntervalMs: 60_000,
    });
    await writer.open();
    t.teardown(() => writer.stop());
    const now = Date.now();
    const data = encodeRow(c!.accountId, meter.id, now, 'silent-1', '5', now);
    const read = readMessageRows(c!.accountId, data, 1);
    if ('poison' in read) throw new Error(read.poison);
    const outcomes: WriteOutcome[] = [];
    await writer.write({ msgs: ['m'], rowsOf: [read.rows], chunks: [data], rows: 1 }, (_, o) => outcomes.push(o));
    t.same(outcomes, [{ kind: 'inserted' }], 'stored');
    const stored = Date.now();

    // a moves (signalled): both apis read a again, and only a.
    const accepted = await send(a!.externalId, 1);
    await seenAfter(accepted, api.url, a!.externalId, 8);
    await seenAfter(accepted, api2.url, a!.externalId, 8);
    t.equal(await usageOn(api.url, c!.externalId), 0, 'c not read again on the accepting api');
    t.equal(await usageOn(api2.url, c!.externalId), 0, 'nor on the other');

    const healed = await seenAfter(stored, net.url, c!.externalId, 5);
    t.comment(`a lost signal healed by the 2-s full read after ${healed} ms`);
    t.ok(healed < 8_000, 'within the full-read interval (plus a pass)');
    const usage = await callJson(
      api.url,
      admin,
      'GET',
      `/v1/meters/${meter.id}/usage?window=none&filter[customer]=${c!.externalId}`,
    );
    t.equal(usage.body.value, 5, 'the usage query sees what the full read saw');
  });

  t.test('a correction moves the check on another api by the signal', async (t) => {
    const cancel = await callJson(api.url, admin, 'POST', `/v1/meters/${meter.id}/usage/corrections`, {
      customer: a!.externalId,
      cancel: ['m-2'],
    });
    t.equal(cancel.status, 201, 'the record of 1 cancelled');
    t.ok((await seenAfter(Date.now(), api2.url, a!.externalId, 7)) < 5_000, 'the check shows 7 again');
  });
});
