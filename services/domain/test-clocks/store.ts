import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { NewTestClock, TestClockRow } from './types.js';

type Queryable = Pick<PgPool, 'query'> | PgClient;

const COLUMNS = `c.id, c.account_id, c.name, c.frozen_time, c.status, c.created_at,
  ARRAY(SELECT a.customer_id FROM accounts a WHERE a.test_clock_id = c.id ORDER BY a.created_at, a.id) AS customer_ids`;

const notFound = (id: string) => new NotFoundError(`No test clock ${id}.`);

export async function insertTestClock(pool: PgPool, c: NewTestClock): Promise<TestClockRow> {
  const r = await pool.query<TestClockRow>(
    `WITH c AS (INSERT INTO test_clocks (id, account_id, name, frozen_time) VALUES ($1, $2, $3, $4) RETURNING *)
     SELECT c.id, c.account_id, c.name, c.frozen_time, c.status, c.created_at, '{}'::text[] AS customer_ids FROM c`,
    [newId('clock'), c.accountId, c.name, c.frozenTime],
  );
  return r.rows[0]!;
}

/** The account's clocks, newest first. */
export async function listTestClocks(
  pool: PgPool,
  accountId: string,
  window: RowWindow,
): Promise<{ rows: TestClockRow[]; total: number }> {
  return selectPage<TestClockRow>(
    pool,
    {
      columns: COLUMNS,
      from: 'test_clocks c',
      where: 'c.account_id = $1',
      params: [accountId],
      orderBy: 'c.created_at DESC, c.id DESC',
    },
    window,
  );
}

/** One of the account's clocks; another account's clock is "not found" like an unknown id. */
export async function getTestClock(q: Queryable, accountId: string, id: string): Promise<TestClockRow> {
  if (!hasPrefix(id, 'clock')) throw notFound(id);
  const r = await q.query<TestClockRow>(`SELECT ${COLUMNS} FROM test_clocks c WHERE c.id = $1 AND c.account_id = $2`, [
    id,
    accountId,
  ]);
  if (!r.rows[0]) throw notFound(id);
  return r.rows[0];
}

/** Deletes a clock without customers; one with customers → 409 test_clock_in_use (they would lose their time). */
export async function deleteTestClock(pool: PgPool, accountId: string, id: string): Promise<void> {
  const clock = await getTestClock(pool, accountId, id);
  if (clock.customer_ids.length)
    throw new ConflictError(
      `Test clock ${id} has customers (${clock.customer_ids.join(', ')}): they live at its time, so it stays.`,
      'test_clock_in_use',
    );
  await pool.query('DELETE FROM test_clocks WHERE id = $1 AND account_id = $2', [id, accountId]);
}

/**
 * Puts a customer (cus_…, any customer of the deployment: the operator bills them all) on the clock. Only a
 * customer with no subscription yet: its periods must start at the clock's time, not at real time. Unknown
 * customer → 422 on customer_id; already on a clock → 409 customer_on_test_clock; with subscriptions → 409
 * customer_has_subscriptions. Holds the customer's clock lock (lockAccountClock) before it counts subscriptions:
 * two attachments of one customer cannot both win, nor an attachment and a subscription's creation.
 */
export async function attachCustomer(
  client: PgClient,
  accountId: string,
  clockId: string,
  customerId: string,
): Promise<TestClockRow> {
  await getTestClock(client, accountId, clockId);
  const locked = await client.query<{ id: string; test_clock_id: string | null }>(
    'SELECT id, test_clock_id FROM accounts WHERE customer_id = $1 FOR UPDATE',
    [customerId],
  );
  const customer = locked.rows[0];
  if (!customer) throw new ValidationError([{ field: 'customer_id', message: 'no such customer' }]);
  // Counted in a statement after the lock: a statement's snapshot predates the lock it waited for (READ COMMITTED),
  // so a count inside the locking statement would miss the subscription committed while it waited.
  const subscriptions = (
    await client.query<{ n: number }>('SELECT count(*)::int AS n FROM subscriptions WHERE account_id = $1', [
      customer.id,
    ])
  ).rows[0]!.n;
  if (customer.test_clock_id === clockId) return getTestClock(client, accountId, clockId);
  if (customer.test_clock_id)
    throw new ConflictError(`Customer ${customerId} is already on another test clock.`, 'customer_on_test_clock');
  if (subscriptions > 0)
    throw new ConflictError(
      `Customer ${customerId} already has subscriptions, whose periods began at real time: only a customer without one can join a test clock.`,
      'customer_has_subscriptions',
    );
  await client.query('UPDATE accounts SET test_clock_id = $2 WHERE id = $1', [customer.id, clockId]);
  return getTestClock(client, accountId, clockId);
}

/** A clock's frozen time, or real time (no clock): what accountTime and invoiceCustomerTime answer. */
function clockTime(clock: { id: string; frozen_time: Date } | undefined): { now: Date; clockId: string | null } {
  return clock ? { now: clock.frozen_time, clockId: clock.id } : { now: new Date(), clockId: null };
}

/**
 * The time an account lives at: its clock's frozen time, or real time for a customer on no clock. Every
 * "now" of a customer — a subscription's start, change and cancellation, its current period, the upcoming
 * invoice, the default usage window, a manual payment — is this.
 */
export async function accountTime(q: Queryable, accountId: string): Promise<{ now: Date; clockId: string | null }> {
  const r = await q.query<{ id: string; frozen_time: Date }>(
    'SELECT c.id, c.frozen_time FROM accounts a JOIN test_clocks c ON c.id = a.test_clock_id WHERE a.id = $1',
    [accountId],
  );
  return clockTime(r.rows[0]);
}

/**
 * accountTime under the customer's clock lock (issue 49): its account row, FOR UPDATE, held to the end of the
 * caller's transaction. THE lock order of a customer's clock and its subscriptions — the account row first, then
 * what is read or written — for both paths: attachCustomer takes it before counting the subscriptions, a
 * subscription's creation before reading the time it starts at. So an attachment and a subscription's creation
 * run one after the other and never both succeed (the later one sees the other's commit: a new statement's snapshot).
 */
export async function lockAccountClock(
  client: PgClient,
  accountId: string,
): Promise<{ now: Date; clockId: string | null }> {
  await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  return accountTime(client, accountId);
}

/**
 * The time of the customer an invoice is for (accountTime), for an operator's action on any customer's invoice
 * (a credit note); an unknown invoice: real time, no clock (the action itself answers 404).
 */
export async function invoiceCustomerTime(
  q: Queryable,
  invoiceId: string,
): Promise<{ now: Date; clockId: string | null }> {
  const r = await q.query<{ id: string; frozen_time: Date }>(
    `SELECT c.id, c.frozen_time FROM invoices i JOIN accounts a ON a.id = i.account_id JOIN test_clocks c ON c.id = a.test_clock_id
      WHERE i.id = $1`,
    [invoiceId],
  );
  return clockTime(r.rows[0]);
}

export async function setClockState(
  q: Queryable,
  id: string,
  state: { frozenTime?: Date; status?: 'ready' | 'advancing' },
): Promise<void> {
  await q.query(
    'UPDATE test_clocks SET frozen_time = COALESCE($2, frozen_time), status = COALESCE($3, status) WHERE id = $1',
    [id, state.frozenTime ?? null, state.status ?? null],
  );
}
