/**
 * The ingest floor (issue 45, `--phases publish-floor,publish-floor-batched`): the least any api on this stack does
 * for a request's records before its 202 — the ceiling's work (bench/ceiling-server.ts: read the body, JSON.parse, a small JSON
 * answer) plus what the design mandates before answering: the record durably in JetStream, written as a stream row
 * through the api's own publisher (services/ingress/publisher.ts: group commit, the same headers), which the real
 * consumer then stores in ClickHouse. No token, rate limit, validation, request context, turns or metrics per
 * request: the single (batched) phase's cost less this one's is what the api's request pipeline adds.
 *
 *   node dist/bench/publish-floor-server.js <port> <accountId> <meterId>     (NATS_URL, NATS_NAMESPACE from env)
 */
import { App, type HttpResponse } from 'uWebSockets.js';
import { NatsNames } from '../shared/clients/nats.js';
import { createLogger } from '../shared/logging.js';
import { Metrics } from '../shared/metrics.js';
import { newUsageId } from '../shared/usage/ids.js';
import { decimalText } from '../shared/usage/value.js';
import { RowWriter } from '../shared/usage/wire.js';
import { UsagePublisher } from '../services/ingress/publisher.js';
import { onWholeBody, type BodyState } from './uws-body.js';

const [port, accountId, meterId] = [Number(process.argv[2]), process.argv[3]!, process.argv[4]!];
const names = new NatsNames(process.env.NATS_NAMESPACE ?? '');
const subject = names.usageSubject(accountId);
const metrics = new Metrics('publish-floor');
const publisher = new UsagePublisher({
  natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  names,
  log: createLogger({ level: 'warn', name: 'publish-floor' }),
  metrics,
  name: `meterline-publish-floor-${process.pid}`,
});

function answer(res: HttpResponse, status: string, out: string): void {
  res.cork(() => {
    res.writeStatus(status);
    res.writeHeader('Content-Type', 'application/json');
    res.end(out);
  });
}

type RawRecord = { value: number; timestamp: string };

/** The records' stream rows, ids assigned (an array: a batch, as POST …/usage takes it). */
function rowsOf(body: RawRecord | RawRecord[], now: number): { rows: Buffer; count: number; id: string } {
  const records = Array.isArray(body) ? body : [body];
  const w = new RowWriter(records.length);
  let id = '';
  for (const r of records)
    w.row(accountId, meterId, Date.parse(r.timestamp), (id = newUsageId()), decimalText(r.value)!, now);
  return { rows: w.bytes(), count: records.length, id };
}

function accept(res: HttpResponse, state: BodyState, body: Buffer): void {
  let parsed: RawRecord | RawRecord[];
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    answer(res, '400 Bad Request', '{"code":"malformed_json"}');
    return;
  }
  const now = Date.now();
  const { rows, count, id } = rowsOf(parsed, now);
  publisher.submit(subject, rows, count).then(
    () => {
      if (state.aborted) return;
      const received = new Date(now).toISOString();
      answer(
        res,
        '202 Accepted',
        count === 1
          ? `{"id":"${id}","received_at":"${received}"}`
          : `{"accepted":${count},"received_at":"${received}"}`,
      );
    },
    () => {
      if (!state.aborted) answer(res, '503 Service Unavailable', '{"code":"unavailable"}');
    },
  );
}

await publisher.start();
// The bench reads the publisher's counters (records accepted, messages stored) as it reads an api process's.
process.on('message', async (m: { type: string; id?: number }) => {
  if (m.type === 'metrics')
    process.send!({ type: 'metrics', id: m.id, metrics: await metrics.registry.getMetricsAsJSON() });
});
const stop = async () => {
  await publisher.stop();
  process.exit(0); // also writes --cpu-prof profiles
};
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
App()
  .any('/*', (res) => onWholeBody(res, (body, state) => accept(res, state, body)))
  .listen('127.0.0.1', port, (socket) => {
    if (!socket) {
      process.stderr.write(`publish floor server: cannot listen on ${port}\n`);
      process.exit(1);
    }
    if (process.send) process.send({ type: 'ready', port });
  });
