import { ValidationError } from '../../../shared/errors.js';
import type { BillingDeps } from './deps.js';
import { runBilling } from './run.js';
import { nextPeriodDue } from './close.js';
import { nextAdvanceDue } from './advance.js';
import { nextTrialNoticeDue } from './trials.js';
import { nextPaymentAttemptDue } from './payments.js';
import { nextDraftDue } from './drafts.js';
import type { BillingScope } from './scope.js';
import { testClockProcessor } from '../payments/create.js';
import { getTestClock, setClockState } from '../test-clocks/store.js';
import type { TestClockRow } from '../test-clocks/types.js';

const notForward = (clock: TestClockRow) =>
  new ValidationError([
    {
      field: 'frozen_time',
      message: `must be after the clock's frozen_time (${clock.frozen_time.toISOString()}): a test clock only moves forward`,
    },
  ]);

/**
 * POST /v1/test_clocks/{id}/advance (docs/test-clocks.md): moves the clock to `target` and runs, for its
 * customers, everything that falls due on the way, in order — the billing engine itself (runBilling, the
 * run of the billing role and of `meterline billing run`) at each instant something is due: a period's end
 * + BILLING_GRACE_SECONDS (its close and first charge; with drafts, its end writes the draft and the grace
 * period's end finalizes and charges it), a dunning retry; then at `target`. Charges go to the
 * sandbox processor only.
 *
 * Safe to crash and repeat: each step is a billing run (one invoice per period, one charge per attempt) and the
 * clock's frozen_time moves to each step once it is done, so a repeated advance resumes where the last stopped
 * (the clock says `advancing` meanwhile). Two advances of one clock at once: a Postgres advisory lock on the
 * clock makes the second wait; it then finds the clock moved — already at its target: answered as is; past
 * it: 422 like any backward move.
 */
export async function advanceTestClock(
  deps: BillingDeps,
  accountId: string,
  clockId: string,
  target: Date,
): Promise<TestClockRow> {
  const before = await getTestClock(deps.pg, accountId, clockId);
  if (target.getTime() <= before.frozen_time.getTime()) throw notForward(before);
  const session = await deps.pg.connect();
  const lockKey = `test_clock:${clockId}`;
  try {
    await session.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey]);
    try {
      const clock = await getTestClock(session, accountId, clockId);
      if (clock.frozen_time.getTime() === target.getTime()) return clock;
      if (clock.frozen_time.getTime() > target.getTime()) throw notForward(clock);
      await setClockState(session, clockId, { status: 'advancing' });
      const scope: BillingScope = { clockId };
      const sandboxed: BillingDeps = { ...deps, processor: testClockProcessor(deps.pg) };
      let at = clock.frozen_time;
      // What fell due at the clock's instant itself first: an advance invoice of a period that began when its
      // subscription was created, a trial notice of a short trial (a run repeated changes nothing).
      await runBilling(sandboxed, at, {}, scope);
      while (at.getTime() < target.getTime()) {
        const step = await nextStop(deps, scope, at, target);
        await runBilling(sandboxed, step, {}, scope);
        await setClockState(session, clockId, { frozenTime: step });
        at = step;
      }
      await setClockState(session, clockId, { status: 'ready' });
      return await getTestClock(session, accountId, clockId);
    } finally {
      await session.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]);
    }
  } finally {
    session.release();
  }
}

/** The first instant after `at` and before `target` at which something of the scope falls due; else `target`. */
async function nextStop(deps: BillingDeps, scope: BillingScope, at: Date, target: Date): Promise<Date> {
  const [period, attempt, draft, advance, notice] = await Promise.all([
    nextPeriodDue(deps, scope),
    nextPaymentAttemptDue(deps, at, scope),
    nextDraftDue(deps, scope),
    nextAdvanceDue(deps, scope),
    nextTrialNoticeDue(deps, scope),
  ]);
  let stop = target.getTime();
  // With drafts a period's invoice is written as a draft at its end: the close runs then, the finalization after
  // the grace period (nextDraftDue).
  const close = deps.drafts ? period?.periodEnd : period?.dueAt;
  for (const due of [close, attempt, draft, advance, notice])
    if (due && due.getTime() > at.getTime() && due.getTime() < stop) stop = due.getTime();
  return new Date(stop);
}
