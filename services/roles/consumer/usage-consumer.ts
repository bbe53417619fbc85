import { Readable } from 'node:stream';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerConfig,
  type ConsumerMessages,
  type JsMsg,
} from '@nats-io/jetstream';
import type { Infra } from '../../../shared/infra.js';
import {
  HDR_COUNT,
  HDR_DEADLINE,
  HDR_FORMAT,
  HDR_VOID,
  USAGE_COLUMNS,
  USAGE_TABLE,
  WIRE_FORMAT,
  WIRE_FORMAT_V1,
  upgradeV1Rows,
} from '../../../shared/usage/wire.js';
import { markHours, type MinuteCounts } from '../../domain/usage/hour-marks.js';
import { UsageShards, type UsageShard } from '../../../shared/usage/shards.js';
import type { Component } from '../role.js';
import { isDataError, describeInsertError } from '../../domain/usage/insert-errors.js';
import { RollupSweeper } from '../../domain/usage/rollup-sweeper.js';
import {
  countsOn,
  PieceAcks,
  readMessageRows,
  shardPieces,
  type MessageRows,
} from '../../domain/usage/message-rows.js';
import { claimNewRows } from '../../domain/usage/claim-lock.js';
import { ACCOUNT_LOCK, settleLockName, withAccountLocks } from '../../domain/usage/account-locks.js';
import { HourSettler } from '../../domain/usage/hour-settler.js';

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
  /** How often the hour settler looks for marked hours to recompute (./hour-settler.ts). */
  settleIntervalMs: number;
  /** Called with messages whose rows were just inserted, before they are acked; a throw naks them. */
  afterInsert?: (msgs: JsMsg[]) => Promise<void>;
}

export const DEFAULT_CONSUMER_OPTIONS: UsageConsumerOptions = {
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
  settleIntervalMs: 1_000,
};

interface Batch {
  msgs: JsMsg[];
  /** Parallel to msgs. */
  rowsOf: MessageRows[];
  /** What the batch's rows touch, counted as they arrive (MessageRows.accounts of each is this map). */
  counts: MinuteCounts;
  chunks: Uint8Array[];
  rows: number;
  bytes: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The consumer role's one component: a durable pull consumer on the USAGE stream (shared by every consumer
 * process, so they split the work) feeding ClickHouse batch INSERTs of up to maxRows rows or every maxWaitMs.
 * A message is acked only after the INSERT holding it succeeded; a failed INSERT naks its messages with
 * exponential backoff; a message that cannot be inserted because of its content is terminated and logged.
 * A record counts once per (account, meter, id, timestamp), or with USAGE_IDENTITY=id once per (account, meter, id)
 * whatever its timestamp (services/domain/usage/claims.ts); redelivery after a crash inserts its rows again, which
 * ReplacingMergeTree (read with FINAL) counts once.
 */
export class UsageConsumer implements Component {
  readonly name = 'usage-consumer';
  private readonly opts: UsageConsumerOptions;
  /**
   * Its own clients, one set per ClickHouse shard (one on a single server): insert failures are reported by
   * our logger (once, with context), not the client's.
   */
  private shards: UsageShards | undefined;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private batch: Batch = emptyBatch();
  private readonly inserts = new Set<Promise<void>>();
  private stopping = false;
  private lastError: string | undefined;
  private readonly rowsInserted;
  private readonly outcomes;
  private readonly insertSeconds;
  private readonly lagSeconds;
  private readonly insertErrors;
  private readonly duplicates;
  private sweeper: RollupSweeper | undefined;
  private settler: HourSettler | undefined;
  private readonly subjectPrefix: string;
  /** Messages whose rows went to several shards in pieces (an operator's attributed rows on a cluster). */
  private readonly pieces = new PieceAcks();

  constructor(
    private readonly infra: Infra,
    opts: Partial<UsageConsumerOptions> = {},
  ) {
    this.opts = { ...DEFAULT_CONSUMER_OPTIONS, ...opts };
    this.subjectPrefix = infra.natsNames.usageSubject('');
    const m = infra.metrics;
    this.rowsInserted = m.counter(
      'meterline_usage_rows_inserted_total',
      'Usage rows inserted into ClickHouse (redeliveries included)',
    );
    this.outcomes = m.counter(
      'meterline_usage_consumer_messages_total',
      'USAGE messages by outcome: inserted, redelivered (delivered again: a consumer died or an INSERT failed before the ack), nak (INSERT failed; retried with backoff), terminated (undecodable; dropped and logged), expired (stored after its ingress had answered 503; not counted), void (marker of such a message)',
      ['outcome'],
    );
    this.insertSeconds = m.histogram(
      'meterline_usage_insert_seconds',
      'ClickHouse INSERT duration',
      [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    );
    this.lagSeconds = m.histogram(
      'meterline_usage_ingest_lag_seconds',
      'From JetStream storage to ClickHouse insert',
      [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    );
    this.duplicates = m.counter(
      'meterline_usage_duplicates_total',
      'Usage rows left out because their record (account, meter, id) was already stored under another timestamp, or repeated in the batch',
    );
    this.insertErrors = m.counter(
      'meterline_usage_insert_errors_total',
      'Failed ClickHouse INSERTs of usage batches: kind "data" (ClickHouse refused the rows; the bad messages are isolated and terminated) or "unavailable" (server down, busy or misconfigured; the messages are redelivered)',
      ['kind'],
    );
  }

  async start(): Promise<void> {
    const { nats, natsNames: names, config: cfg } = this.infra;
    this.shards = await UsageShards.open(cfg, { maxOpenConnections: this.opts.maxConcurrentInserts + 1, quiet: true });
    const { pg, log } = this.infra;
    this.sweeper = new RollupSweeper(pg, this.shards, cfg.CLICKHOUSE_DATABASE, log, this.opts.sweepIntervalMs);
    this.settler = new HourSettler(pg, this.shards, cfg.CLICKHOUSE_DATABASE, log, this.opts.settleIntervalMs);
    const jsm = await jetstreamManager(nats);
    const config: Partial<ConsumerConfig> = {
      durable_name: names.usageConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: names.usageSubjects,
      ack_wait: this.opts.ackWaitMs * 1_000_000,
      max_ack_pending: this.opts.maxAckPending,
      max_deliver: -1, // ClickHouse may be down for long; content problems are terminated instead
    };
    const existing = await jsm.consumers.info(names.usageStream, names.usageConsumer).catch(() => null);
    if (!existing) {
      await jsm.consumers.add(names.usageStream, config);
    } else if (
      existing.config.ack_wait !== config.ack_wait ||
      existing.config.max_ack_pending !== config.max_ack_pending
    ) {
      await jsm.consumers.update(names.usageStream, names.usageConsumer, {
        ack_wait: config.ack_wait,
        max_ack_pending: config.max_ack_pending,
      });
    }
    const consumer = await jetstream(nats).consumers.get(names.usageStream, names.usageConsumer);
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
        this.lastError = 'the pull subscription ended';
        this.infra.log.error('usage consumer: the pull subscription ended unexpectedly');
      }
    })().catch((err) => {
      this.lastError = (err as Error).message;
      this.infra.log.error({ err }, 'usage consumer loop failed');
    });
    this.sweeper.start();
    this.settler.start();
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
    nb.rowsOf.push(rows);
    nb.chunks.push(data);
    nb.rows += count;
    nb.bytes += data.length;
    nb.timer ??= setTimeout(() => void this.flush(), this.opts.maxWaitMs);
  }

  private poison(m: JsMsg, reason: string): void {
    if (!this.pieces.failed(m)) return;
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

  /**
   * The batch's rows that count (claimNewRows when a record is (account, meter, id)), into the shard, after marking
   * every hour they touch (services/domain/usage/hour-marks.ts) — both holding their meters' settle locks shared, so a
   * recompute that counts these marks waits for these rows. Readers take the marked hours raw until the settler
   * (./hour-settler.ts) has recomputed them.
   */
  private async insertCounted(shard: UsageShard, rows: MessageRows[], chunks: Uint8Array[]): Promise<void> {
    const { config, pg } = this.infra;
    const counts = countsOn(this.shards!, shard, rows);
    let counted = chunks;
    // By default the timestamp is part of a record's identity: ReplacingMergeTree alone counts each once.
    if (config.USAGE_IDENTITY === 'id') {
      const batch = await claimNewRows(pg, shard, config.CLICKHOUSE_DATABASE, chunks);
      if (batch.dropped) this.duplicates.inc(batch.dropped);
      counted = batch.chunks;
    }
    if (counted.length === 0) return;
    const meters: string[] = [];
    for (const [account, byMeter] of counts)
      for (const meter of byMeter.keys()) meters.push(settleLockName(account, meter));
    await withAccountLocks(pg, ACCOUNT_LOCK.SETTLE, meters, 'shared', async () => {
      await shard.replicas.run((ch) => markHours(ch, config.CLICKHOUSE_DATABASE, counts, Date.now(), shard.local));
      await this.insert(shard, counted);
    });
  }

  /** Into the shard's table itself (a fresh stream per replica tried): it returns once the shard holds the rows. */
  private async insert(shard: UsageShard, chunks: Uint8Array[]): Promise<void> {
    await shard.replicas.run((ch) =>
      ch.insert({
        table: USAGE_TABLE + shard.local,
        values: Readable.from(chunks, { objectMode: false }),
        format: 'TabSeparated',
        columns: [...USAGE_COLUMNS],
      }),
    );
  }

  /**
   * The batch split by the ClickHouse shard owning each message's accounts; each part acked on its own (a message
   * split over several shards once all its pieces are in).
   */
  private async insertBatch(b: Batch): Promise<void> {
    const parts = new Map<UsageShard, Batch>();
    for (const [i, m] of b.msgs.entries()) {
      const pieces = shardPieces(b.rowsOf[i]!, b.chunks[i]!, this.shards!);
      this.pieces.expect(m, pieces.length);
      for (const piece of pieces) {
        let part = parts.get(piece.shard);
        if (!part) parts.set(piece.shard, (part = emptyBatch()));
        part.msgs.push(m);
        part.rowsOf.push(piece.rows);
        part.chunks.push(piece.data);
        part.rows += piece.rows.count;
      }
    }
    if (parts.size === 1) return this.insertPart([...parts.keys()][0]!, b);
    await Promise.all([...parts].map(([shard, part]) => this.insertPart(shard, part)));
  }

  private async insertPart(shard: UsageShard, b: Batch): Promise<void> {
    const started = performance.now();
    try {
      await this.insertCounted(shard, b.rowsOf, b.chunks);
      // ── The batch is durably inserted (its hours marked, its rows stored). Work that
      // must follow a successful insert goes here, before the acks. ──
      await this.opts.afterInsert?.(b.msgs);
      const seconds = (performance.now() - started) / 1000;
      this.insertSeconds.observe(seconds);
      this.acked(b.msgs, b.rows);
      this.infra.log.debug(
        { rows: b.rows, messages: b.msgs.length, ms: Math.round(seconds * 1000) },
        'usage batch inserted',
      );
      this.lastError = undefined;
    } catch (err) {
      this.lastError = describeInsertError(err);
      this.insertErrors.inc({ kind: isDataError(err) ? 'data' : 'unavailable' });
      if (isDataError(err)) {
        this.infra.log.warn(
          { err: this.lastError, messages: b.msgs.length },
          'usage insert rejected its data; isolating the bad messages',
        );
        await this.isolate(shard, b.msgs, b.rowsOf, b.chunks);
      } else {
        this.infra.log.warn(
          { err: this.lastError, messages: b.msgs.length, rows: b.rows },
          'usage insert failed; messages will be redelivered',
        );
        for (const m of b.msgs) this.nak(m);
      }
    }
  }

  /** One INSERT per message: the ones ClickHouse refuses for their content are terminated. */
  private async isolate(shard: UsageShard, msgs: JsMsg[], rows: MessageRows[], chunks: Uint8Array[]): Promise<void> {
    for (const [i, m] of msgs.entries()) {
      try {
        await this.insertCounted(shard, [rows[i]!], [chunks[i]!]); // the message's rows as batched (tsv1 upgraded)
        // The message is durably inserted (as in insertBatch).
        await this.opts.afterInsert?.([m]);
        this.acked([m], rows[i]!.count);
      } catch (err) {
        if (isDataError(err)) this.poison(m, describeInsertError(err));
        else this.nak(m);
      }
    }
  }

  private acked(msgs: JsMsg[], rows: number): void {
    const now = Date.now();
    for (const m of msgs) {
      if (!this.pieces.inserted(m)) continue;
      m.ack();
      this.lagSeconds.observe((now - Math.floor(m.info.timestampNanos / 1e6)) / 1000);
    }
    this.rowsInserted.inc(rows);
    this.outcomes.inc({ outcome: 'inserted' }, msgs.length);
  }

  private nak(m: JsMsg): void {
    if (!this.pieces.failed(m)) return;
    const attempt = Math.max(1, m.info.deliveryCount);
    const delay = Math.min(this.opts.backoffMaxMs, this.opts.backoffBaseMs * 2 ** Math.min(attempt - 1, 16));
    this.outcomes.inc({ outcome: 'nak' });
    m.nak(delay);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // Stop pulling; what we hold is inserted and acked, anything buffered beyond it is redelivered.
    this.messages?.stop();
    await this.loop;
    await this.flush();
    while (this.inserts.size) await Promise.allSettled([...this.inserts]);
    await this.sweeper?.stop();
    await this.settler?.stop();
    await this.shards?.close();
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    if (!this.messages || this.stopping) return { ok: false, detail: 'not consuming' };
    if (this.lastError) return { ok: false, detail: `last insert failed: ${this.lastError}` };
    const sweep = this.sweeper?.problem();
    if (sweep) return { ok: false, detail: `rollup sweeps failing for over a minute: ${sweep}` };
    const settle = this.settler?.problem();
    return settle ? { ok: false, detail: `hour settles failing for over a minute: ${settle}` } : { ok: true };
  }
}

function emptyBatch(): Batch {
  return { msgs: [], rowsOf: [], chunks: [], counts: new Map(), rows: 0, bytes: 0, timer: undefined };
}
