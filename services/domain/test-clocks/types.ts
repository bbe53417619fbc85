/** A test clock (docs/test-clocks.md) as stored: a simulated time its customers live at. */
export interface NewTestClock {
  /** The operator account that makes and owns it. */
  accountId: string;
  name: string | null;
  frozenTime: Date;
}

export type TestClockStatus = 'ready' | 'advancing';

export interface TestClockRow {
  id: string;
  account_id: string;
  name: string | null;
  frozen_time: Date;
  status: TestClockStatus;
  created_at: Date;
  /** cus_… of the customers on it, oldest attachment first. */
  customer_ids: string[];
}
