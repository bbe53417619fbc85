/**
 * The bench's opt-in phases that run on worlds or meters of their own, after the ingest phases and the count
 * check of bench/run.ts: dimension reads, webhooks, billing (plain and through Stripe) and the noisy neighbour.
 * Each writes its part of the report.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { arg, opts } from './options.js';
import { BENCH_PROCESSES, launch } from './processes.js';
import type { BenchReport } from './report.js';
import type { BenchWorld } from './world.js';
import { runGroupByReadsPhase, runUniqueCountsPhase } from './phases/dimension-reads.js';
import { runWebhooksPhase } from './phases/webhooks.js';
import { runBillingPhase } from './phases/billing-run.js';
import { runStripeBillingPhase } from './phases/stripe-billing.js';
import { runNoisyNeighbourPhase } from './phases/noisy-neighbour.js';

export interface OwnWorldRun {
  world: BenchWorld;
  ch: ClickHouseClient;
  apiPort: number;
  log: (m: string) => void;
}

export async function runOwnWorldPhases({ world, ch, apiPort, log }: OwnWorldRun, report: BenchReport): Promise<void> {
  const { resultsDir } = BENCH_PROCESSES;
  // Dimension reads (bench/phases/dimension-reads.ts, issue 18): opt-in, `--phases group-by-reads,unique-counts`.
  if (opts.phases.includes('group-by-reads')) {
    report.group_by_reads = await runGroupByReadsPhase({
      world,
      ch,
      apiPort,
      log,
      records: arg('group-by-records', 10_000_000),
      distinct: arg('group-by-values', 20),
    });
  }
  if (opts.phases.includes('unique-counts')) {
    report.unique_counts = await runUniqueCountsPhase({
      world,
      ch,
      apiPort,
      log,
      records: arg('unique-records', 2_000_000),
      users: arg('unique-users', 1_000_000),
      repeats: arg('unique-repeats', 20),
    });
  }

  // Webhook delivery (bench/phases/webhooks.ts): opt-in, `--phases webhooks`.
  if (opts.phases.includes('webhooks')) {
    report.webhooks = await runWebhooksPhase({
      world,
      log,
      launch: (name, args, env) => launch(name, args, env),
      dispatcherProcs: arg('dispatcher-procs', 1),
      profileDir: opts.profile ? resultsDir : undefined,
      burstEvents: arg('webhook-burst-events', 500),
      steadyEventsPerS: arg('webhook-events-per-s', 20),
      steadySeconds: arg('webhook-steady-seconds', 10),
    });
  }

  // Billing (bench/phases/billing-run.ts): one run closing --billing-subscriptions periods.
  if (opts.phases.includes('billing-run')) {
    // The plain run; the same with every price model, minimums, prepaid credit and late usage (issue 17); mixed
    // intervals, anchors and trials (issue 29) — each beside the others.
    const billing = {
      world,
      log,
      subscriptions: arg('billing-subscriptions', 10_000),
      accounts: arg('billing-accounts', 1_000),
      recordsPerMeter: arg('billing-records-per-meter', 20),
    };
    report.billing_run = await runBillingPhase(billing);
    report.billing_run_mix = await runBillingPhase({ ...billing, mix: true });
    report.billing_run_periods = await runBillingPhase({ ...billing, periods: true });
  }

  // Billing through Stripe (bench/phases/stripe-billing.ts): the simulator, the official SDK, one run.
  if (opts.phases.includes('stripe-billing')) {
    report.stripe_billing = await runStripeBillingPhase({
      world,
      log,
      invoices: arg('stripe-invoices', 5_000),
      accounts: arg('stripe-accounts', 200),
    });
  }

  // One account at 10× its ingest limit next to one at a normal rate (bench/phases/noisy-neighbour.ts): opt-in.
  if (opts.phases.includes('noisy-neighbour')) {
    report.noisy_neighbour = await runNoisyNeighbourPhase({
      world,
      apiPort,
      log,
      seconds: arg('noisy-seconds', 10),
      limit: arg('noisy-limit', 2000),
      quietPerSecond: arg('quiet-per-s', 50),
      floodGenerator: process.argv.includes('--noisy-in-process') ? 'in-process' : 'process',
    });
  }
}
