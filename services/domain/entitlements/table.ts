import type { ClickHouseClient } from '@clickhouse/client';
import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import { UnavailableError } from '../../../shared/errors.js';
import { Decimal } from '../../../shared/money/decimal.js';
import { accountUsage, type AccountUsageTarget } from '../usage/account-usage.js';
import { BOOLEAN_ACCESS, meteredAccess, termsOf, type Access } from './access.js';
import { entitlementTableVersion, loadEntitlements, type LoadedEntitlement } from './store.js';
import type { GrantRow } from './types.js';
import type { MovedAccounts } from './moved-accounts.js';
import { meteredEntries, mustReadUsage, usageTargetOf, type Entry, type MeteredState } from './usage-reads.js';

export interface EntitlementTableOptions {
  /** How often the table polls its version (reloading on a change) and re-reads usage: ~one ClickHouse query each. */
  refreshMs?: number;
  /** A full reload this often whatever the version says (a missed change heals). */
  reloadMs?: number;
  /** A metered check answers 503 once usage could not be refreshed for this long (never a stale balance). */
  maxStalenessMs?: number;
  /** Between full usage reads (of every metered entitlement) a pass reads only the accounts signalled as moved. */
  fullRefreshMs?: number;
}

/**
 * Every entitlement of the deployment in memory (docs/entitlements.md): a check is a few map lookups, no
 * Postgres and no ClickHouse query. One pass every `refreshMs`: poll the Postgres version (triggers bump it in
 * the transaction of every change; reload everything when it moved), then read the current period's usage of the
 * metered entitlements that need it with ONE ClickHouse query (accountUsage: the deduplicated usage every read of
 * the service sees) and precompute their answers. Which need it: those of the accounts the "usage moved" signal
 * named since the previous pass began (the consumer sends it once a batch is readable in ClickHouse) — and all of
 * them every `fullRefreshMs`, after a reload, and whenever a signal may have been lost (./moved-accounts.ts). A
 * record accepted (202) is in ClickHouse within the consumer's batch wait (500 ms), so a check reflects it within
 * about a second.
 */
export class EntitlementTable {
  private entries = new Map<string, Map<string, Entry>>();
  private accountOfName = new Map<string, string>();
  private version: string | undefined;
  private loadedAt = 0;
  private refreshedAt = 0;
  /** When the last full usage read began; a reload or a failed pass makes the next one full. */
  private fullReadAt = 0;
  private fullDue = true;
  private readonly task: PeriodicTask;
  private readonly opts: Required<EntitlementTableOptions>;

  constructor(
    private readonly deps: {
      pg: PgPool;
      ch: ClickHouseClient;
      database: string;
      log: Logger;
      /** The "usage moved" signal; without it every pass reads every metered entitlement. */
      moved?: MovedAccounts;
    },
    opts: EntitlementTableOptions = {},
  ) {
    this.opts = { refreshMs: 500, reloadMs: 60_000, maxStalenessMs: 10_000, fullRefreshMs: 10_000, ...opts };
    this.task = new PeriodicTask({
      name: 'entitlement table refresh',
      everyMs: this.opts.refreshMs,
      log: deps.log,
      run: () => this.refresh(),
    });
  }

  /**
   * Resolves after the first load was tried: an api whose Postgres or ClickHouse is down still starts (ingest
   * needs neither); until the table is loaded every check answers 503, never from an empty table.
   */
  async start(): Promise<void> {
    this.deps.moved?.start();
    await this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
    this.deps.moved?.stop();
  }

  health(): { ok: boolean; detail?: string } {
    if (this.version === undefined) return { ok: false, detail: 'entitlements not loaded' };
    return { ok: true, detail: `${this.size} entitlements` };
  }

  get size(): number {
    let n = 0;
    for (const m of this.entries.values()) n += m.size;
    return n;
  }

  /** The account a customer name (`cus_` id or external id) is, among customers with an entitlement. */
  accountOf(name: string): string | undefined {
    return this.accountOfName.get(name);
  }

  /** The answer for (account, feature); undefined: no such entitlement. */
  check(
    accountId: string,
    feature: string,
    nowMs = Date.now(),
  ): { entitlement: LoadedEntitlement; access: Access } | undefined {
    if (this.version === undefined) throw new UnavailableError('Entitlements are not loaded yet; retry shortly.', 2);
    const entry = this.entries.get(accountId)?.get(feature);
    if (!entry) return undefined;
    const row = entry.row;
    if (row.type === 'boolean') return { entitlement: row, access: BOOLEAN_ACCESS };
    if (nowMs - this.refreshedAt > this.opts.maxStalenessMs)
      throw new UnavailableError(
        'Usage for entitlement checks cannot be confirmed current right now; retry shortly.',
        2,
      );
    const now = row.clock_time ?? new Date(nowMs);
    const state = entry.state;
    const t = now.getTime();
    if (state && t >= state.periodStartMs && t < state.periodEndMs) return { entitlement: row, access: state.access };
    // A new period began since the last refresh: nothing of it was read yet — it starts at zero.
    return { entitlement: row, access: meteredAccess(termsOf(row), entry.grants, new Decimal(0), now) };
  }

  private async refresh(): Promise<void> {
    const version = await entitlementTableVersion(this.deps.pg);
    if (version !== this.version || Date.now() - this.loadedAt > this.opts.reloadMs) await this.reload();
    await this.refreshUsage();
  }

  private async reload(): Promise<void> {
    const loadedAt = Date.now();
    const snapshot = await loadEntitlements(this.deps.pg);
    const grantsOf = new Map<string, GrantRow[]>();
    for (const g of snapshot.grants) {
      const list = grantsOf.get(g.entitlement_id);
      if (list) list.push(g);
      else grantsOf.set(g.entitlement_id, [g]);
    }
    const entries = new Map<string, Map<string, Entry>>();
    const names = new Map<string, string>();
    const previous = this.entries;
    for (const row of snapshot.entitlements) {
      let byFeature = entries.get(row.account_id);
      if (!byFeature) entries.set(row.account_id, (byFeature = new Map()));
      // Until the next usage read, answer from the last one under the new limit, grants and overage.
      const before = previous.get(row.account_id)?.get(row.feature);
      const grants = grantsOf.get(row.id) ?? [];
      const usage = before?.state && sameUsage(before.row, row) ? before.state.access.usage : undefined;
      let state = usage ? stateOf(row, grants, usage, loadedAt) : undefined;
      if (state && state.periodStartMs !== before!.state!.periodStartMs) state = undefined; // read in another period
      byFeature.set(row.feature, { row, grants, state });
      names.set(row.customer_id, row.account_id);
      if (row.external_id !== null) names.set(row.external_id, row.account_id);
    }
    this.entries = entries;
    this.accountOfName = names;
    this.version = snapshot.version;
    this.loadedAt = loadedAt;
    this.fullDue = true; // new entries have nothing read yet, changed ones may read another meter or period
  }

  private async refreshUsage(): Promise<void> {
    const startedAt = Date.now();
    const signalled = this.deps.moved?.take();
    const full = this.fullDue || signalled === undefined || startedAt - this.fullReadAt >= this.opts.fullRefreshMs;
    const moved = full ? undefined : signalled;
    const read: { entry: Entry; now: Date }[] = [];
    // Entries replaced by a reload while the query ran get their usage at the next pass.
    const targets: AccountUsageTarget[] = [];
    for (const entry of meteredEntries(this.entries.values())) {
      const row = entry.row;
      const now = row.clock_time ?? new Date(startedAt);
      if (!mustReadUsage(entry, moved, now.getTime())) {
        // Its usage held still, but a grant starting or ending moves its answer with time.
        if (entry.grants.length > 0) entry.state = stateOf(row, entry.grants, entry.state!.access.usage!, startedAt);
        continue;
      }
      read.push({ entry, now });
      targets.push(usageTargetOf(row, now));
    }
    let usage: Decimal[] = [];
    try {
      if (targets.length > 0) usage = await accountUsage(this.deps.ch, this.deps.database, targets);
    } catch (err) {
      if (signalled) this.deps.moved!.putBack(signalled);
      throw err;
    }
    read.forEach(({ entry, now }, i) => {
      const t = now.getTime();
      if (!answerMoved(entry, usage[i]!, t)) return;
      entry.state = stateOf(entry.row, entry.grants, usage[i]!, t);
    });
    if (full) {
      this.fullDue = false;
      this.fullReadAt = startedAt;
    }
    // Also when nothing moved and nothing was read: every answer is as current as the signal says.
    this.refreshedAt = startedAt;
  }
}

/**
 * Whether an entry's answer must be computed again after a usage read: not when the usage read is the one it
 * holds, in the same period, and nothing else in it moves with time (grants do: they start and end). Keeping the
 * answer object keeps what hangs off it — the check route's text of it — so a refresh under ingest rebuilds only
 * the answers whose usage moved, not all of them twice a second.
 */
function answerMoved(entry: Entry, usage: Decimal, nowMs: number): boolean {
  const state = entry.state;
  if (!state || entry.grants.length > 0) return true;
  if (nowMs < state.periodStartMs || nowMs >= state.periodEndMs) return true;
  return !usage.eq(state.access.usage!);
}

/** The usage read for `a` is `b`'s too: same entitlement, meter and period kind. */
function sameUsage(a: LoadedEntitlement, b: LoadedEntitlement): boolean {
  return (
    a.id === b.id &&
    a.type === 'metered' &&
    a.period === b.period &&
    a.meter_id === b.meter_id &&
    a.clock_time?.getTime() === b.clock_time?.getTime()
  );
}

function stateOf(row: LoadedEntitlement, grants: readonly GrantRow[], usage: Decimal, nowMs: number): MeteredState {
  const access = meteredAccess(termsOf(row), grants, usage, row.clock_time ?? new Date(nowMs));
  return { periodStartMs: access.period_start!.getTime(), periodEndMs: access.period_end!.getTime(), access };
}
