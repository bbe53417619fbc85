import { Readable } from 'node:stream';
import type { Infra } from '../../../shared/infra.js';
import { USAGE_COLUMNS, USAGE_TABLE } from '../../../shared/usage/wire.js';
import { UsageShards, type UsageShard } from '../../../shared/clients/usage-shards.js';
import type { SecondCounts } from './hour-marks.js';
import { markHours, markPartials } from './hour-marks-store.js';
import { isDataError, describeInsertError } from './insert-errors.js';
import { RollupSweeper } from './rollup-sweeper.js';
import { countsOn, PieceAcks, shardPieces, type MessageRows } from './message-rows.js';
import { randomUUID } from 'node:crypto';
import { claimNewRows, type ClaimRule } from './claim-lock.js';
import { RecentIds } from './recent-ids.js';
import { ACCOUNT_LOCK, settleLockName, withAccountLocks } from './account-locks.js';
import { HourSettler } from './hour-settler.js';
import { openHourFirstSecond, partialLines } from './partials.js';
import { insertPartials } from './partials-store.js';
import type { UsageMoved } from './usage-moved.js';

/**
 * What became of one message's rows: `inserted` (durably in ClickHouse: ack it), `retry` (ClickHouse unavailable:
 * deliver it again later), `poison` (ClickHouse refuses its content: drop it, saying why).
 */
export type WriteOutcome = { kind: 'inserted' } | { kind: 'retry' } | { kind: 'poison'; reason: string };

/** Messages (of any transport) with their rows as read by readMessageRows, in parallel arrays. */
export interface WriteBatch<M> {
  msgs: M[];
  rowsOf: MessageRows[];
  chunks: Uint8Array[];
  rows: number;
  /**
   * Each message's stream sequence, the same on every delivery: the key of its partials (./partials.ts). Without
   * them no partials are written (the marks say so, and readers scan those seconds raw).
   */
  keys?: number[];
}

export interface UsageWriterOptions {
  /** ClickHouse connections per shard (the caller's concurrent writes, plus one). */
  maxOpenConnections: number;
  /** How often the rollup sweeper looks for closed hours to roll up (./rollup-sweeper.ts). */
  sweepIntervalMs: number;
  /** How often the hour settler looks for marked hours to recompute (./hour-settler.ts). */
  settleIntervalMs: number;
  /** Told the accounts of each insert once ClickHouse holds its rows (./usage-moved.ts). */
  moved?: UsageMoved;
}

/**
 * The storage half of ingestion: a batch of stream messages' rows into ClickHouse, one outcome per message. A
 * record counts once per (account, meter, id) within USAGE_IDENTITY_WINDOW of its first accept whatever its
 * timestamp (./claims.ts, ./recent-ids.ts), forever with USAGE_IDENTITY=id, or once per (account, meter, id,
 * timestamp) with USAGE_IDENTITY=timestamp; rows written again after a crash are counted once by ReplacingMergeTree
 * (read with FINAL). The writer also runs the background work that keeps reads fast: the rollup sweeper and the
 * hour settler. The transport (pull, ack, nak, term) is the caller's: services/roles/consumer/usage-consumer.ts.
 */
export class UsageWriter<M> {
  /**
   * Its own clients, one set per ClickHouse shard (one on a single server): insert failures are reported by
   * our logger (once, with context), not the client's.
   */
  private shards: UsageShards | undefined;
  private sweeper: RollupSweeper | undefined;
  private settler: HourSettler | undefined;
  /** Messages whose rows went to several shards in pieces (an operator's attributed rows on a cluster). */
  private readonly pieces = new PieceAcks<M>();
  /** The last insert's failure, cleared by the next success. */
  private lastError: string | undefined;
  private readonly rowsInserted;
  private readonly insertSeconds;
  private readonly insertErrors;
  private readonly duplicates;
  /** How records are claimed; undefined: they are not (USAGE_IDENTITY=timestamp). */
  private readonly claimRule: ClaimRule | undefined;

  constructor(
    private readonly infra: Pick<Infra, 'config' | 'pg' | 'log' | 'metrics'>,
    private readonly opts: UsageWriterOptions,
  ) {
    const { USAGE_IDENTITY: identity, USAGE_IDENTITY_WINDOW: windowS } = infra.config;
    if (identity === 'id')
      this.claimRule = { windowMs: Number.POSITIVE_INFINITY, owner: `${process.pid}-${randomUUID()}` };
    else if (identity === 'window')
      this.claimRule = {
        windowMs: windowS * 1000,
        recent: { ids: new RecentIds(windowS * 1000), owner: `${process.pid}-${randomUUID()}` },
      };
    const m = infra.metrics;
    this.rowsInserted = m.counter(
      'meterline_usage_rows_inserted_total',
      'Usage rows inserted into ClickHouse (redeliveries included)',
    );
    this.insertSeconds = m.histogram(
      'meterline_usage_insert_seconds',
      'ClickHouse INSERT duration',
      [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    );
    this.duplicates = m.counter(
      'meterline_usage_duplicates_total',
      'Usage rows left out because their record (account, meter, id) was already stored under another timestamp (within the identity window), or repeated in the batch',
    );
    this.insertErrors = m.counter(
      'meterline_usage_insert_errors_total',
      'Failed ClickHouse INSERTs of usage batches: kind "data" (ClickHouse refused the rows; the bad messages are isolated and terminated) or "unavailable" (server down, busy or misconfigured; the messages are redelivered)',
      ['kind'],
    );
  }

  /** Opens the shard clients: writes may follow. */
  async open(): Promise<void> {
    const { config: cfg, pg, log } = this.infra;
    this.shards = await UsageShards.open(cfg, { maxOpenConnections: this.opts.maxOpenConnections, quiet: true });
    this.sweeper = new RollupSweeper(pg, this.shards, cfg.CLICKHOUSE_DATABASE, log, this.opts.sweepIntervalMs);
    this.settler = new HourSettler(pg, this.shards, cfg.CLICKHOUSE_DATABASE, log, this.opts.settleIntervalMs);
  }

  /** Starts the sweeper and the settler (once the caller is consuming). */
  startBackground(): void {
    this.sweeper!.start();
    this.settler!.start();
  }

  /**
   * Writes the batch, split by the ClickHouse shard owning each message's accounts. `decided` is told each
   * message's outcome once, as soon as it is known (a message split over several shards once all its pieces are
   * in, or at its first failing piece). `afterInsert` runs on messages whose rows were just inserted, before they
   * are told `inserted`; a throw there makes them `retry`.
   */
  async write(
    b: WriteBatch<M>,
    decided: (m: M, outcome: WriteOutcome) => void,
    afterInsert?: (msgs: M[]) => Promise<void>,
  ): Promise<void> {
    const parts = new Map<UsageShard, WriteBatch<M>>();
    for (const [i, m] of b.msgs.entries()) {
      const pieces = shardPieces(b.rowsOf[i]!, b.chunks[i]!, this.shards!);
      this.pieces.expect(m, pieces.length);
      for (const piece of pieces) {
        let part = parts.get(piece.shard);
        if (!part) parts.set(piece.shard, (part = { msgs: [], rowsOf: [], chunks: [], rows: 0, keys: b.keys && [] }));
        part.msgs.push(m);
        part.keys?.push(b.keys![i]!);
        part.rowsOf.push(piece.rows);
        part.chunks.push(piece.data);
        part.rows += piece.rows.count;
      }
    }
    const tell = new Teller(this.pieces, decided);
    if (parts.size === 1) return this.writePart([...parts.keys()][0]!, b, tell, afterInsert);
    await Promise.all([...parts].map(([shard, part]) => this.writePart(shard, part, tell, afterInsert)));
  }

  private async writePart(
    shard: UsageShard,
    b: WriteBatch<M>,
    tell: Teller<M>,
    afterInsert?: (msgs: M[]) => Promise<void>,
  ): Promise<void> {
    const started = performance.now();
    try {
      await this.insertCounted(shard, b.rowsOf, b.chunks, b.keys);
      // ── The batch is durably inserted (its hours marked, its rows stored). Work that
      // must follow a successful insert goes here, before the acks. ──
      await afterInsert?.(b.msgs);
      const seconds = (performance.now() - started) / 1000;
      this.insertSeconds.observe(seconds);
      this.rowsInserted.inc(b.rows);
      for (const m of b.msgs) tell.inserted(m);
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
        await this.isolate(shard, b, tell, afterInsert);
      } else {
        this.infra.log.warn(
          { err: this.lastError, messages: b.msgs.length, rows: b.rows },
          'usage insert failed; messages will be redelivered',
        );
        for (const m of b.msgs) tell.failed(m, { kind: 'retry' });
      }
    }
  }

  /** One INSERT per message: the ones ClickHouse refuses for their content are poison. */
  private async isolate(
    shard: UsageShard,
    b: WriteBatch<M>,
    tell: Teller<M>,
    afterInsert?: (msgs: M[]) => Promise<void>,
  ): Promise<void> {
    for (const [i, m] of b.msgs.entries()) {
      try {
        await this.insertCounted(shard, [b.rowsOf[i]!], [b.chunks[i]!], b.keys && [b.keys[i]!]); // the message's rows as batched
        // The message is durably inserted (as in writePart).
        await afterInsert?.([m]);
        this.rowsInserted.inc(b.rowsOf[i]!.count);
        tell.inserted(m);
      } catch (err) {
        tell.failed(m, isDataError(err) ? { kind: 'poison', reason: describeInsertError(err) } : { kind: 'retry' });
      }
    }
  }

  /**
   * The rows that count (claimNewRows unless USAGE_IDENTITY=timestamp), into the shard, after marking
   * every hour they touch (./hour-marks.ts), then the partials of the open hour's seconds (./partials.ts) — all
   * holding their meters' settle locks shared, so a recompute that counts these marks waits for these rows.
   * Readers take the marked hours raw until the settler (./hour-settler.ts) has recomputed them, the open hour's
   * pending seconds from the partials when every insert that marked them wrote its partials.
   */
  private async insertCounted(
    shard: UsageShard,
    rows: MessageRows[],
    chunks: Uint8Array[],
    keys: number[] | undefined,
  ): Promise<void> {
    const { config, pg } = this.infra;
    const counts: SecondCounts = countsOn(this.shards!, shard, rows);
    const nowMs = Date.now();
    let counted = chunks;
    let partials: Buffer | undefined;
    // With USAGE_IDENTITY=timestamp the timestamp is part of a record's identity: ReplacingMergeTree alone counts
    // each once, and a client's retry can't be told from a new record — so no partials either.
    if (this.claimRule) {
      const batch = await claimNewRows(pg, shard, config.CLICKHOUSE_DATABASE, chunks, this.claimRule, keys);
      if (batch.dropped) this.duplicates.inc(batch.dropped);
      counted = batch.chunks;
      if (keys && counted.length)
        partials = partialLines({ chunks, keys, fresh: batch.fresh, openFromSecond: openHourFirstSecond(nowMs) });
    }
    if (counted.length === 0) return;
    const meters: string[] = [];
    for (const [account, byMeter] of counts)
      for (const meter of byMeter.keys()) meters.push(settleLockName(account, meter));
    const db = config.CLICKHOUSE_DATABASE;
    await withAccountLocks(pg, ACCOUNT_LOCK.SETTLE, meters, 'shared', async () => {
      const marks = await shard.replicas.run((ch) => markHours(ch, db, counts, nowMs, shard.local));
      await this.insert(shard, counted);
      // After the rows, never beside them: a read plans from the marks, then reads the data a moment later, when
      // it may find partials of an insert that marked a second since; its raw rows must be there too, or the next
      // read (planned raw for that second) would answer less (a bench run with the two in parallel did). Then the
      // marks say the partials are there — a second of this insert is read from them only from that moment.
      if (partials)
        await shard.replicas.run(async (ch) => {
          if (partials.length) await insertPartials(ch, db, partials, shard.local);
          await markPartials(ch, db, marks, shard.local);
        });
    });
    this.opts.moved?.moved(counts.keys());
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
   * A message the caller found poison before writing it (bad headers, rows of another account): whether this is
   * its first failure (a message split into pieces is dropped once).
   */
  firstFailure(m: M): boolean {
    return this.pieces.failed(m);
  }

  /** What is wrong, for the caller's health: the last insert failed, or sweeps or settles keep failing. */
  problem(): string | undefined {
    if (this.lastError) return `last insert failed: ${this.lastError}`;
    const sweep = this.sweeper?.problem();
    if (sweep) return `rollup sweeps failing for over a minute: ${sweep}`;
    const settle = this.settler?.problem();
    return settle ? `hour settles failing for over a minute: ${settle}` : undefined;
  }

  /** Stops the sweeper and the settler and closes the clients; the caller first waits for its writes. */
  async stop(): Promise<void> {
    await this.sweeper?.stop();
    await this.settler?.stop();
    await this.shards?.close();
  }
}

/** Tells each message's outcome once: inserted once every piece is, failed at the first failing piece. */
class Teller<M> {
  constructor(
    private readonly pieces: PieceAcks<M>,
    private readonly decided: (m: M, outcome: WriteOutcome) => void,
  ) {}

  inserted(m: M): void {
    if (this.pieces.inserted(m)) this.decided(m, { kind: 'inserted' });
  }

  failed(m: M, outcome: WriteOutcome): void {
    if (this.pieces.failed(m)) this.decided(m, outcome);
  }
}
