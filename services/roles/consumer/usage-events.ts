import { createHash } from 'node:crypto';
import { Kvm, type KvWatchEntry } from '@nats-io/kv';
import type { JsMsg } from '@nats-io/jetstream';
import type { QueuedIterator } from '@nats-io/transport-node';
import { retryTransient } from '../../../shared/clients/durable-consumer.js';
import type { Infra } from '../../../shared/infra.js';
import type { Component } from '../role.js';
import { DEPLOYMENT_SUBSCRIBER, USAGE_EVENT_TYPE } from '../../domain/webhooks/usage-subscribers.js';
import { appendUsageEvents } from '../../domain/events/outbox-store.js';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ROWS_PER_INSERT = 5_000;

/**
 * The id of the `meter.usage.recorded` event of one stored usage record: derived from the record's identity
 * (account, meter, timestamp, record id — the same key under which ClickHouse counts it once), so a
 * redelivered message or a client retry days later names the same event, and outbox_events' primary key
 * keeps one.
 */
export function usageEventId(accountId: string, meterId: string, tsMs: number, recordId: string): string {
  const digest = createHash('sha256').update(`${accountId}\n${meterId}\n${tsMs}\n${recordId}`).digest();
  let out = 'evt_';
  for (let i = 0; i < 22; i++) out += ALPHABET[digest[i]! % 62];
  return out;
}

const UNESCAPE: Record<string, string> = { '\\\\': '\\', '\\t': '\t', '\\n': '\n', '\\r': '\r' };

interface UsageRow {
  accountId: string;
  meterId: string;
  tsMs: number;
  recordId: string;
  valueText: string;
}

/** Parses the TabSeparated rows of a USAGE message (shared/usage/wire.ts column order). */
export function parseUsageRows(data: Uint8Array): UsageRow[] {
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  const rows: UsageRow[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [accountId, meterId, ts, recordId, valueText] = line.split('\t');
    if (!accountId || !meterId || !ts || recordId === undefined || !valueText) continue;
    rows.push({
      accountId,
      meterId,
      tsMs: Number(ts),
      recordId: recordId.replace(/\\[\\tnr]/g, (s) => UNESCAPE[s]!),
      valueText,
    });
  }
  return rows;
}

/**
 * Emits `meter.usage.recorded` (docs/design.md §9) for stored usage records of accounts with an enabled webhook
 * subscribed to it. The usage consumer calls afterInsert() once a batch's INSERT succeeded and before it acks:
 * a failure here naks the batch, and the retry's events dedupe on their derived ids. Accounts outside the
 * replicated subscriber set (a KV watch, like the meter registry) cost one Set lookup per message.
 *
 * Events are written to the outbox (the events log of GET /v1/events), which the outbox relay publishes
 * to EVENTS like any other event.
 */
export class UsageEventEmitter implements Component {
  readonly name = 'usage-events';
  private readonly subscribers = new Set<string>();
  private watch: QueuedIterator<KvWatchEntry> | undefined;
  private loop: Promise<void> | undefined;
  private readonly emitted;

  constructor(private readonly infra: Infra) {
    this.emitted = infra.metrics.counter(
      'meterline_usage_events_emitted_total',
      'meter.usage.recorded events written (duplicates of earlier ones excluded)',
    );
  }

  async start(): Promise<void> {
    // Each a JetStream API call, at a start that may find the cluster slow to answer (durable-consumer.ts).
    const kv = await retryTransient(() => new Kvm(this.infra.nats).open(this.infra.natsNames.webhookUsageBucket));
    const empty = (await retryTransient(() => kv.status())).values === 0;
    let markLoaded!: () => void;
    const loaded = new Promise<void>((r) => (markLoaded = r));
    if (empty) markLoaded();
    this.watch = await retryTransient(() => kv.watch());
    const watch = this.watch;
    this.loop = (async () => {
      for await (const e of watch) {
        if (e.operation === 'PUT') this.subscribers.add(e.key);
        else this.subscribers.delete(e.key);
        if (e.isUpdate) markLoaded(); // the last entry of the initial snapshot is the first flagged as an update
      }
    })().catch((err) => this.infra.log.error({ err }, 'usage events: subscriber watch failed'));
    await loaded;
  }

  async stop(): Promise<void> {
    this.watch?.stop();
    await this.loop;
  }

  /** True while the account (or the deployment: operator mode) has an enabled webhook subscribed to meter.usage.recorded. */
  isSubscribed(accountId: string): boolean {
    return this.subscribers.has(accountId) || this.subscribers.has(DEPLOYMENT_SUBSCRIBER);
  }

  /** The consumer's hook: `msgs` were just inserted into ClickHouse and are not acked yet. */
  readonly afterInsert = async (msgs: JsMsg[]): Promise<void> => {
    if (this.subscribers.size === 0) return;
    let rows: UsageRow[] | undefined;
    for (const m of msgs) {
      // An operator's attributed rows (usage.customers.<emitter>) are many accounts': each row is its own.
      if (this.infra.natsNames.isAttributedUsageSubject(m.subject)) {
        const mine = parseUsageRows(m.data).filter((r) => this.isSubscribed(r.accountId));
        if (mine.length) (rows ??= []).push(...mine);
        continue;
      }
      // One account per message, named by the subject's last token (usage.<account>).
      const account = m.subject.slice(m.subject.lastIndexOf('.') + 1);
      if (!this.isSubscribed(account)) continue;
      (rows ??= []).push(...parseUsageRows(m.data).filter((r) => r.accountId === account));
    }
    if (!rows) return;
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await this.write(rows.slice(i, i + ROWS_PER_INSERT));
  };

  private async write(rows: UsageRow[]): Promise<void> {
    const appended = await appendUsageEvents(
      this.infra.pg,
      USAGE_EVENT_TYPE,
      rows.map((r) => ({
        id: usageEventId(r.accountId, r.meterId, r.tsMs, r.recordId),
        accountId: r.accountId,
        meterId: r.meterId,
        recordId: r.recordId,
        value: r.valueText,
        timestamp: new Date(r.tsMs).toISOString(),
      })),
    );
    this.emitted.inc(appended);
  }
}
