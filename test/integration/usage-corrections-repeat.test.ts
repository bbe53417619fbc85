import t from 'tap';
import { MeterlineClient } from 'meterline/client';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApi } from '../fixtures/api.js';
import { insertCorrection, meterForCorrection } from '../../services/domain/corrections/store.js';
import { checkCorrection } from '../../services/control/corrections/input.js';
import { iso, startConsumer, storedIds } from './ingest-helpers.js';

/**
 * What a billing user gets when corrections repeat or overlap (docs/usage.md "Correcting usage"): the same replace
 * again, overlapping replaces one after the other and at the same time, an earlier correction left pending,
 * and a cancel naming an id no record has.
 */
const HOUR = 3_600_000;

t.test('corrections: repeats, overlaps and unknown ids', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 100 });
  const acct = await createTestAccount(api.infra);
  const token = acct.auth.write.authorization.replace(/^Bearer /, '');
  const client = new MeterlineClient({ baseUrl: api.url, token });
  const correct = (meterId: string, body: unknown) =>
    client
      .send('POST', `/v1/meters/${meterId}/usage/corrections`, body)
      .then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
  const T = Math.floor((Date.now() - 3 * 86_400_000) / HOUR) * HOUR;
  const day = iso(T).slice(0, 10);
  const total = async (meterId: string) =>
    client.getUsage(meterId, { start_date: day, end_date: iso(T + 4 * HOUR).slice(0, 10), window: 'none' });
  const meter = () => client.createMeter({ name: 'm', unit: 'calls', aggregation: 'sum' });
  const rec = (value: number, at: number, id?: string) => ({ value, timestamp: iso(at), ...(id ? { id } : {}) });
  // A: [T, T+2h) → 1 at T+30m, 10 at T+90m. B: [T+1h, T+3h) → 100 at T+90m, 1000 at T+150m.
  const replaceA = (ids: boolean) => ({
    replace: {
      start: iso(T),
      end: iso(T + 2 * HOUR),
      records: [rec(1, T + 30 * 60_000, ids ? 'a1' : undefined), rec(10, T + 90 * 60_000, ids ? 'a2' : undefined)],
    },
  });
  const replaceB = (ids: boolean) => ({
    replace: {
      start: iso(T + HOUR),
      end: iso(T + 3 * HOUR),
      records: [rec(100, T + 90 * 60_000, ids ? 'b1' : undefined), rec(1000, T + 150 * 60_000, ids ? 'b2' : undefined)],
    },
  });

  await t.test(
    'the same replace twice: without ids the range holds its records once; with ids the repeat is refused (422), the first stands',
    async (t) => {
      const m = await meter();
      t.equal((await correct(m.id, replaceA(false))).status, 201);
      t.equal((await correct(m.id, replaceA(false))).status, 201, 'no ids: applied again with new use_ ids');
      t.match(await total(m.id), { value: 11, count: 2 }, 'the range holds the replacement once');
      t.equal(
        (await client.request<any>('GET', `/v1/meters/${m.id}/usage/corrections`)).pagination.total,
        2,
        'both corrections are listed',
      );

      const n = await meter();
      t.equal((await correct(n.id, replaceA(true))).status, 201);
      const again = await correct(n.id, replaceA(true));
      t.equal(again.status, 422, 'ids now stored in the range: refused');
      t.same(
        again.body.errors.map((e: any) => e.field),
        ['replace.records[0].id', 'replace.records[1].id'],
      );
      t.match(await total(n.id), { value: 11, count: 2 }, 'the first replace stands, nothing doubled');
    },
  );

  await t.test('overlapping replaces one after the other: the later one wins where they overlap', async (t) => {
    const m = await meter();
    t.equal((await correct(m.id, replaceA(true))).status, 201);
    t.equal((await correct(m.id, replaceB(true))).status, 201);
    t.match(await total(m.id), { value: 1 + 100 + 1000, count: 3 }, 'a2 (in the overlap) cancelled by B');
  });

  await t.test(
    'overlapping replaces at the same time: applied one after the other, never both in the overlap',
    async (t) => {
      const meters = await Promise.all(Array.from({ length: 4 }, meter));
      const answers = await Promise.all(
        meters.flatMap((m) => [correct(m.id, replaceA(true)), correct(m.id, replaceB(true))]),
      );
      t.same(
        answers.map((a) => a.status),
        Array(8).fill(201),
      );
      for (const m of meters) {
        const got = await total(m.id);
        // A then B: 1 + 100 + 1000; B then A: 1 + 10 + 1000. Both in the overlap (1 + 10 + 100 + 1000) would be a double count.
        t.ok(
          (got.value === 1101 || got.value === 1011) && got.count === 3,
          `meter ${m.id}: ${got.value} over ${got.count} records is one replace after the other`,
        );
      }
    },
  );

  await t.test('an earlier correction left pending is applied before the next one of the meter', async (t) => {
    const m = await meter();
    const meterRow = await meterForCorrection(api.infra.pg, acct.accountId, m.id);
    const a = replaceA(true).replace;
    const pending = await insertCorrection(
      api.infra.pg,
      acct.accountId,
      m.id,
      checkCorrection(
        { kind: 'replace', startMs: T, endMs: T + 2 * HOUR, records: a.records },
        meterRow,
        acct.accountId,
      ),
      { userId: acct.userId, clientId: 'test' },
    );
    t.equal(pending.state, 'pending', 'A recorded, its process died before applying it');
    t.equal((await correct(m.id, replaceB(true))).status, 201);
    t.match(
      await total(m.id),
      { value: 1 + 100 + 1000, count: 3 },
      'A first, then B: B wins the overlap as it came later',
    );
    const list = (await client.request<any>('GET', `/v1/meters/${m.id}/usage/corrections`)).data;
    t.same(
      list.map((c: any) => c.state),
      ['applied', 'applied'],
    );
  });

  await t.test('a cancel naming an unknown id: 201, and a record with that id never counts', async (t) => {
    const m = await meter();
    const res = await correct(m.id, { cancel: ['typo-1'] });
    t.equal(res.status, 201);
    t.same(res.body.cancel, ['typo-1'], 'the answer lists the ids as named: it does not say none matched');
    await client.recordMeterUsage(m.id, rec(5, T + 10 * 60_000, 'typo-1'));
    await client.recordMeterUsage(m.id, rec(7, T + 20 * 60_000, 'other'));
    await waitUntil(async () => (await storedIds(api.infra, m.id)).size === 2, 'both records stored');
    // Both are in one past hour: once its rollup was recomputed for them, the read counts what counts.
    await waitUntil(async () => (await total(m.id)).count > 0, 'the hour recomputed');
    t.match(await total(m.id), { value: 7, count: 1 }, 'the id cancelled before it arrived does not count');
    t.equal((await correct(m.id, { cancel: ['other', 'other'] })).status, 201);
    t.match(await total(m.id), { value: 0, count: 0 }, 'an id named twice is cancelled once');
  });
});
