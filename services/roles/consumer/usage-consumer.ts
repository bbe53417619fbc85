import { AckPolicy, DeliverPolicy, jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { Infra } from '../../../shared/infra.js';
import { ensureDurableConsumer, retryTransient } from '../../../shared/clients/durable-consumer.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import {
  HDR_COUNT,
  HDR_DEADLINE,
  HDR_FORMAT,
  HDR_VOID,
  WIRE_FORMAT,
  WIRE_FORMAT_V1,
  upgradeV1Rows,
} from '../../../shared/usage/wire.js';
import type { SecondCounts } from '../../domain/usage/hour-marks.js';
import { readMessageRows, type MessageRows } from '../../domain/usage/message-rows.js';
import { UsageWriter, type WriteOutcome } from '../../domain/usage/writer.js';
import { UsageMovedPublisher } from '../../domain/usage/usage-moved.js';
import type { Component } from '../role.js';

/** Tunables of the USAGE → ClickHouse pipeline; tests shrink some of them. */
export interface UsageConsumerOptions {
  /** Rows per INSERT, at most. */
  maxRows: number;
  /** Payload bytes per INSERT, at most. */
  maxBytes: number;
  /** A batch is inserted at the latest this long after its first message arrived. */
  maxWaitMs: number;
  /** INSERTs in flight per process; more arriving messages wait (bounded memory). */
  maxConcurrentInserts: number;
  /**
   * Messages the pull subscription buffers ahead of the batches (a message holds ≤ 1 MiB). Counted in
   * messages, not bytes: a byte-bounded pull stalls until it expires when the next message doesn't fit.
   */
  pullMessages: number;
  /** Messages handed out and not yet acked, across every consumer process. */
  maxAckPending: number;
  /**
   * Redelivery when a process died holding messages. A slower INSERT only risks a second delivery, which
   * the table's dedup absorbs.
   */
  ackWaitMs: number;
  /** nak delays: base × 2^(delivery − 1), capped. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How often the rollup sweeper looks for closed hours to roll up. */
  sweepIntervalMs: number;
  /** How often the hour settler looks for marked hours to recompute (services/domain/usage/hour-settler.ts). */
  settleIntervalMs: number;
  /** Called with messages whose rows were just inserted, before they are acked; a throw naks them. */
  afterInsert?: (msgs: JsMsg[]) => Promise<void>;
}

/** The options' defaults; how often hours are settled comes from USAGE_SETTLE_INTERVAL_MS (shared/config.ts). */
export const DEFAULT_CONSUMER_OPTIONS: Omit<UsageConsumerOptions, 'settleIntervalMs'> = {
  maxRows: 50_000,
  maxBytes: 8 * 1024 * 1024,
  maxWaitMs: 500,
  maxConcurrentInserts: 2,
  pullMessages: 128,
  maxAckPending: 20_000,
  ackWaitMs: 20_000,
  backoffBaseMs: 250,
  backoffMaxMs: 10_000,
  sweepIntervalMs: 2_000,
};

interface Batch {
  msgs: JsMsg[];
  /** Parallel to msgs. */
  rowsOf: MessageRows[];
  /** What the batch's rows touch, counted as they arrive (MessageRows.accounts of each is this map). */
  counts: SecondCounts;
  chunks: Uint8Array[];
  /** Each message's stream sequence (the key of its partials: services/domain/usage/partials.ts). */
  keys: number[];
  rows: number;
  bytes: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The consumer role's one component: a durable pull consumer on the USAGE stream (shared by every consumer
 * process, so they split the work) feeding batches of up to maxRows rows, or every maxWaitMs, to the usage writer
 * (services/domain/usage/writer.ts), which stores them in ClickHouse and tells one outcome per message. A message
 * is acked only once its rows are inserted; one ClickHouse could not take is nakked with exponential backoff; one
 * whose content cannot be inserted is terminated and logged.
 */
export class UsageConsumer implements Component {
  readonly name = 'usage-consumer';
  private readonly opts: UsageConsumerOptions;
  private readonly writer: UsageWriter<JsMsg>;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private batch: Batch = emptyBatch();
  private readonly inserts = new Set<Promise<void>>();
  /**
   * Messages taken into a batch and not yet acked, naked or terminated. While an insert is slow (waiting on an
   * account's claim lock, ClickHouse under load) they are told in progress every third of ack_wait: redelivered to
   * another process meanwhile they would be written twice — counted once, but at twice the cost, and with each
   * process then waiting on the other's locks, a slow moment fed on itself.
   */
  private readonly held = new Set<JsMsg>();
  private progress: PeriodicTask | undefined;
  private stopping = false;
  /** Why the pull loop ended, if it did. */
  private loopError: string | undefined;
  private readonly outcomes;
  private readonly lagSeconds;
  private readonly subjectPrefix: string;
  /** Tells the api processes whose usage each insert moved (their entitlement tables re-read only those). */
  private readonly moved: UsageMovedPublisher;

  constructor(
    private readonly infra: Infra,
    opts: Partial<UsageConsumerOptions> = {},
  ) {
    this.opts = {
      ...DEFAULT_CONSUMER_OPTIONS,
      settleIntervalMs: infra.config.USAGE_SETTLE_INTERVAL_MS,
      ...opts,
    };
    this.subjectPrefix = infra.natsNames.usageSubject('');
    this.moved = new UsageMovedPublisher(infra.nats, infra.natsNames.usageMovedSubject, infra.log);
    this.writer = new UsageWriter(infra, {
      maxOpenConnections: this.opts.maxConcurrentInserts + 1,
      sweepIntervalMs: this.opts.sweepIntervalMs,
      settleIntervalMs: this.opts.settleIntervalMs,
      moved: this.moved,
    });
    const m = infra.metrics;
    this.outcomes = m.counter(
      'meterline_usage_consumer_messages_total',
      'USAGE messages by outcome: inserted, redelivered (delivered again: a consumer died or an INSERT failed before the ack), nak (INSERT failed; retried with backoff), terminated (undecodable; dropped and logged), expired (stored after its ingress had answered 503; not counted), void (marker of such a message)',
      ['outcome'],
    );
    this.lagSeconds = m.histogram(
      'meterline_usage_ingest_lag_seconds',
      'From JetStream storage to ClickHouse insert',
      [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    );
  }

  async start(): Promise<void> {
    const { nats, natsNames: names } = this.infra;
    await this.writer.open();
    const config = {
      durable_name: names.usageConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: names.usageSubjects,
      ack_wait: this.opts.ackWaitMs * 1_000_000,
      max_ack_pending: this.opts.maxAckPending,
      max_deliver: -1, // ClickHouse may be down for long; content problems are terminated instead
    };
    await ensureDurableConsumer(nats, names.usageStream, config, (existing) =>
      existing.config.ack_wait !== config.ack_wait || existing.config.max_ack_pending !== config.max_ack_pending
        ? { ack_wait: config.ack_wait, max_ack_pending: config.max_ack_pending }
        : undefined,
    );
    const consumer = await retryTransient(() => jetstream(nats).consumers.get(names.usageStream, names.usageConsumer));
    this.messages = await consumer.consume({ max_messages: this.opts.pullMessages });
    const messages = this.messages;
    this.loop = (async () => {
      for await (const m of messages) {
        if (this.stopping) {
          m.nak(); // redelivered to another process at once
          break;
        }
        await this.accept(m);
      }
      if (!this.stopping) {
        this.loopError = 'the pull subscription ended';
        this.infra.log.error('usage consumer: the pull subscription ended unexpectedly');
      }
    })().catch((err) => {
      this.loopError = (err as Error).message;
      this.infra.log.error({ err }, 'usage consumer loop failed');
    });
    const held = this.held;
    this.progress = new PeriodicTask({
      name: 'usage messages in progress',
      everyMs: Math.max(1_000, Math.floor(this.opts.ackWaitMs / 3)),
      log: this.infra.log,
      run: async () => {
        for (const m of held) m.working();
      },
    });
    void this.progress.start();
    this.writer.startBackground();
    this.infra.log.info({ stream: names.usageStream, durable: names.usageConsumer }, 'usage consumer started');
  }

  private async accept(m: JsMsg): Promise<void> {
    if (m.info.deliveryCount > 1) {
      this.outcomes.inc({ outcome: 'redelivered' });
      this.infra.log.debug(
        {
          seq: m.seq,
          delivery: m.info.deliveryCount,
          stored_ms_ago: Date.now() - Math.floor(m.info.timestampNanos / 1e6),
        },
        'usage message redelivered',
      );
    }
    const h = m.headers;
    if (h?.get(HDR_VOID)) {
      this.outcomes.inc({ outcome: 'void' });
      m.ack();
      return;
    }
    const format = h?.get(HDR_FORMAT) ?? '';
    const count = Number(h?.get(HDR_COUNT));
    const deadline = Number(h?.get(HDR_DEADLINE));
    if (format !== WIRE_FORMAT && format !== WIRE_FORMAT_V1)
      return this.poison(m, `unknown payload format "${format}"`);
    const data = format === WIRE_FORMAT_V1 ? upgradeV1Rows(m.data) : m.data;
    if (!Number.isInteger(count) || count < 1) return this.poison(m, `bad ${HDR_COUNT} header`);
    if (!Number.isFinite(deadline)) return this.poison(m, `bad ${HDR_DEADLINE} header`);
    if (data.length === 0 || data[data.length - 1] !== 0x0a)
      return this.poison(m, 'payload is not newline-terminated rows');
    if (!m.subject.startsWith(this.subjectPrefix)) return this.poison(m, `subject ${m.subject} names no account`);
    const storedMs = Math.floor(m.info.timestampNanos / 1e6);
    if (storedMs > deadline) {
      // The ingress stopped waiting for this message and answered 503: it must not count.
      this.outcomes.inc({ outcome: 'expired' });
      this.infra.log.warn(
        { seq: m.seq, stored_ms: storedMs, deadline },
        'usage message stored after its deadline; skipped',
      );
      m.ack();
      return;
    }
    const b = this.batch;
    if (b.msgs.length > 0 && (b.rows + count > this.opts.maxRows || b.bytes + data.length > this.opts.maxBytes))
      await this.flush();
    const nb = this.batch;
    // Counted into the batch's map (what its insert marks): an operator's customers recur across its messages.
    const read = readMessageRows(m.subject.slice(this.subjectPrefix.length), data, count, nb.counts);
    if ('poison' in read) return this.poison(m, read.poison); // its counts only mark a little more: harmless
    const rows = read.rows;
    nb.msgs.push(m);
    this.held.add(m);
    nb.rowsOf.push(rows);
    nb.chunks.push(data);
    nb.keys.push(m.seq);
    nb.rows += count;
    nb.bytes += data.length;
    nb.timer ??= setTimeout(() => void this.flush(), this.opts.maxWaitMs);
  }

  private poison(m: JsMsg, reason: string): void {
    if (!this.writer.firstFailure(m)) return;
    this.terminate(m, reason);
  }

  private terminate(m: JsMsg, reason: string): void {
    this.held.delete(m);
    this.outcomes.inc({ outcome: 'terminated' });
    this.infra.log.error({ seq: m.seq, subject: m.subject, reason }, 'usage message terminated (poison)');
    // No reason on the wire: servers before 2.11 don't recognise "+TERM <reason>" and would redeliver.
    m.term();
  }

  /** Hands the current batch to an INSERT; waits while maxConcurrentInserts are running. */
  private async flush(): Promise<void> {
    const b = this.batch;
    if (b.timer) clearTimeout(b.timer);
    this.batch = emptyBatch();
    if (b.msgs.length === 0) return;
    while (this.inserts.size >= this.opts.maxConcurrentInserts) await Promise.race(this.inserts);
    const p = this.insertBatch(b).finally(() => this.inserts.delete(p));
    this.inserts.add(p);
  }

  /** Writes a batch (services/domain/usage/writer.ts) and acks, naks or terminates each message as it is told. */
  private insertBatch(b: Batch): Promise<void> {
    return this.writer.write(b, (m, outcome) => this.settle(m, outcome), this.opts.afterInsert);
  }

  private settle(m: JsMsg, outcome: WriteOutcome): void {
    this.held.delete(m);
    if (outcome.kind === 'inserted') {
      m.ack();
      this.lagSeconds.observe((Date.now() - Math.floor(m.info.timestampNanos / 1e6)) / 1000);
      this.outcomes.inc({ outcome: 'inserted' });
    } else if (outcome.kind === 'poison') this.terminate(m, outcome.reason);
    else {
      const attempt = Math.max(1, m.info.deliveryCount);
      const delay = Math.min(this.opts.backoffMaxMs, this.opts.backoffBaseMs * 2 ** Math.min(attempt - 1, 16));
      this.outcomes.inc({ outcome: 'nak' });
      m.nak(delay);
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // Stop pulling; what we hold is inserted and acked, anything buffered beyond it is redelivered.
    this.messages?.stop();
    await this.loop;
    await this.flush();
    while (this.inserts.size) await Promise.allSettled([...this.inserts]);
    this.moved.flush();
    await this.progress?.stop();
    await this.writer.stop();
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    if (!this.messages || this.stopping) return { ok: false, detail: 'not consuming' };
    if (this.loopError) return { ok: false, detail: `last insert failed: ${this.loopError}` };
    const problem = this.writer.problem();
    return problem ? { ok: false, detail: problem } : { ok: true };
  }
}

function emptyBatch(): Batch {
  return { msgs: [], rowsOf: [], chunks: [], keys: [], counts: new Map(), rows: 0, bytes: 0, timer: undefined };
}
