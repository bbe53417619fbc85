import t from 'tap';
import { CustomerTable } from '../../shared/customers/table.js';
import { Attribution } from '../../shared/customers/attribution.js';
import { AccountRateLimiter } from '../../shared/limits/rate-limiter.js';
import type { MeterRecord } from '../../shared/meters/record.js';
import { newId } from '../../shared/ids.js';
import { checkBatch, takeCustomerRates } from '../../services/ingress/batch.js';
import type { RecordContext } from '../../services/ingress/records.js';

// An operator's batch (operator mode): each record's customer from the registry, each customer's records against
// its own rate. The integration test operator-ingest.test.ts does the same over HTTP; this one checks the batch's
// bookkeeping of a refused customer (its rows out, its results rate_limited, everyone else's untouched).
t.test("an operator's batch: a customer over its rate loses its records only, in place", async (t) => {
  const table = new CustomerTable();
  const quiet = { accountId: newId('acct'), customerId: newId('cus'), externalId: 'quiet' };
  const noisy = { accountId: newId('acct'), customerId: newId('cus'), externalId: 'noisy' };
  table.applyShard(1, [quiet, noisy]);
  const operator = newId('acct');
  const meter: MeterRecord = {
    id: newId('mtr'),
    account_id: operator,
    type: 'counter',
    aggregation: 'sum',
    status: 'active',
    updated_at_ms: Date.now(),
    scope: 'deployment',
  };
  const limiter = new AccountRateLimiter(undefined);
  t.teardown(() => limiter.stop());
  const limits = new Map([
    [quiet.accountId, 1_000],
    [noisy.accountId, 2],
  ]);
  const ctx: RecordContext = {
    accountId: operator,
    now: Date.now(),
    attribution: new Attribution({ accountId: operator, operator: true }, { table, assertCurrent: () => undefined }),
    takeRecordsEach: (accounts, slots) => limiter.takeEach('ingest', accounts, (a) => limits.get(a)!, slots),
  };
  // The noisy customer spent its second already (a batch larger than a whole limit passes on a full bucket).
  t.same(await ctx.takeRecordsEach!([noisy.accountId, noisy.accountId]), new Map());
  const ts = new Date(Date.now() - 60_000).toISOString();
  const items = [
    { value: 1, timestamp: ts, customer: 'quiet', id: 'q1' },
    { value: 2, timestamp: ts, customer: 'noisy', id: 'n1' },
    { value: 3, timestamp: ts, customer: 'nobody', id: 'x1' },
    { value: 4, timestamp: ts, customer: 'noisy', id: 'n2' },
    { value: -1, timestamp: ts, customer: 'quiet', id: 'bad' },
    { value: 5, timestamp: ts, customer: 'noisy', id: 'n3' },
    { value: 6, timestamp: ts, customer_id: quiet.customerId, id: 'q2' },
  ];
  const b = await takeCustomerRates(
    checkBatch(items, () => meter, ctx, false),
    ctx,
  );
  const results = JSON.parse(`[${b.resultsJson}]`) as {
    index: number;
    status: string;
    id?: string;
    error?: { code: string };
  }[];
  t.same(
    results.map((r) => [r.index, r.status, r.id ?? r.error!.code]),
    [
      [0, 'accepted', 'q1'],
      [1, 'rejected', 'rate_limited'],
      [2, 'rejected', 'unknown_customer'],
      [3, 'rejected', 'rate_limited'],
      [4, 'rejected', 'validation_failed'],
      [5, 'rejected', 'rate_limited'],
      [6, 'accepted', 'q2'],
    ],
    'every result at its index: the noisy customer’s records refused (its second spent), nothing else',
  );
  t.equal(b.accepted, 2);
  t.same(
    b.rejected.map((r) => r.index),
    [1, 2, 3, 4, 5],
    'rejections in index order',
  );
  const rows = b.rows.toString('utf8').trimEnd().split('\n');
  t.same(
    rows.map((r) => r.split('\t').slice(0, 4)[3]),
    ['q1', 'q2'],
    'only the quiet customer’s rows are published',
  );
  t.ok(
    rows.every((r) => r.startsWith(`${quiet.accountId}\t`)),
    'as the quiet customer’s',
  );
  t.ok(b.rateLimited, 'the refusal is kept for a 429 when nothing else is left');
});
