/** `npm run bench`'s command line: numbers (`--seconds 12`) and flags (`--keep`). */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? Number(process.argv[i + 1]) : fallback;
}
/** A comma-separated list of numbers (`--live-rates 25000,50000`). */
export function list(name: string, fallback: number[]): number[] {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] !== undefined ? process.argv[i + 1]!.split(',').map(Number) : fallback;
}
export const flag = (name: string) => process.argv.includes(`--${name}`);
/** The options of `npm run bench` (flags on the command line). */
export const opts = {
  seconds: arg('seconds', 12),
  warmupSeconds: arg('warmup', 3),
  connections: arg('connections', 64),
  apiProcs: arg('api-procs', 1),
  consumerProcs: arg('consumer-procs', 1),
  /** Scheduling priority (nice) of the api processes: > 0 lets storage have the CPU first on a shared machine. */
  apiNice: arg('api-nice', 0),
  threads: arg('threads', 2),
  batch: arg('batch', 100),
  /** The stream phase: WebSockets, and unanswered frames each keeps (≤ USAGE_STREAM_MAX_INFLIGHT). */
  streamConnections: arg('stream-connections', 8),
  streamWindow: arg('stream-window', 16),
  wrk: !flag('no-wrk'),
  autocannon: !flag('no-autocannon'),
  keep: flag('keep'),
  /** Use the stack's NATS and ClickHouse (their CPU then includes everyone else's work on them). */
  sharedServers: flag('shared-servers'),
  /** Writes V8 CPU profiles of the api processes to bench/results/ (open in Chrome DevTools). */
  profile: flag('profile'),
  /** Comma-separated subset of ceiling,single,batched,get-product,get-usage (the count check always runs). */
  phases: (process.argv[process.argv.indexOf('--phases') + 1] && process.argv.includes('--phases')
    ? process.argv[process.argv.indexOf('--phases') + 1]!
    : 'ceiling,single,batched,stream,get-product,usage-query,get-usage,billing-run,stripe-billing'
  ).split(','),
};
