/** `npm run bench -- --help`: the options and phases of bench/run.ts, each phase with its own flags (docs/benchmarks.md). */
import { flag } from './options.js';

const HELP = `npm run bench -- [options]      (node dist/bench/run.js [options]; docs/benchmarks.md says what each phase shows)

Options (defaults in brackets):
  --phases a,b,…          the phases to run, in the run's own order [ceiling,single,batched,stream,get-product,
                          usage-query,get-usage,billing-run,stripe-billing]; the count check always runs
  --seconds N [12]  --warmup N [3]  --connections N [64]  --threads N [2]  --batch N [100]
  --api-procs N [1]  --consumer-procs N [1]  --api-nice N [0]  --stream-gb N [2]
  --stream-connections N [8]  --stream-window N [16]
  --no-wrk  --no-autocannon  --keep (the world is not dropped)  --shared-servers (the stack's NATS and ClickHouse)
  --profile (V8 CPU profiles of the api in bench/results/)  --help

Phases (default ones first; the others opt-in):
  ceiling                 bare uWS server: read, JSON.parse, 202
  single, batched, stream POST …/usage one record, --batch records, the usage WebSocket
  get-product             GET /v1/products/{id}
  usage-query, get-usage  --reads-records N [10000000] over 30 days: one read alone, then under load
  billing-run             --billing-subscriptions N [10000] --billing-accounts N [1000] --billing-records-per-meter N [20]
  stripe-billing          --stripe-invoices N [5000] --stripe-accounts N [200]
  floor, healthz          diagnostics: a missing meter (404), GET /healthz
  publish-floor, publish-floor-batched
                          diagnostics: single's (batched's) requests to the ceiling plus the durable publish alone;
                          publish-floor-batched in a run without batched (a second 10 M-record burst in one
                          hour settles for minutes: docs/benchmarks.md)
  control-reads           GET of a product, meter, plan, customer, an entitlement check (read caches)
  emitter                 --emitter-records N [200000] --emitter-batch N [1000] --emitter-concurrency N [4]
  group-by-reads          --group-by-records N [10000000] --group-by-values N [20]
  unique-counts           --unique-records N [2000000] --unique-users N [1000000] --unique-repeats N [20]
  backfill, hot-hour      --backfill-records N [5000000]: live vs 30 days late; the hot hour read after the load
  visible-rate            --live-rates a,b,… --backfill-rates a,b,… --rate-seconds N [15] --visible-poll-ms N [1000]
  hot-read                a hot meter read WHILE ingested: --hot-read-rate N [100000] records/s (open loop) in
                          requests of --hot-read-batch N [1000] for --hot-read-seconds N [20], its current hour and
                          day read every 50 ms: p50/p99/max (target p99 ≤ 100 ms); a wrong answer fails the run
  retry-identity          --identity-records N [1000000] per variant (live, fresh ids, 20 % retries),
                          --identity-rounds N [1]: the variants N times, ratios the rounds' medians
  attributed              --attributed-customers N [10000] --registry-customers N [1000000]
  entitlement-check       --entitlement-customers N [10000] --entitlement-ingest-rate R [100000] (not with attributed)
  webhooks                --dispatcher-procs N [1] --webhook-burst-events N [500] --webhook-events-per-s N [20]
                          --webhook-steady-seconds N [10]
  noisy-neighbour         --noisy-seconds N [10] --noisy-limit N [2000] --quiet-per-s N [50] [--noisy-in-process]
  cluster                 two whole topologies (bench/cluster.ts), run by itself
`;

/** Prints the help when asked (`--help`): the run then does nothing else. */
export function helpAsked(): boolean {
  if (!flag('help')) return false;
  process.stdout.write(HELP);
  return true;
}
