import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import type { NatsConnection } from '../../../shared/clients/nats.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import { UnavailableError } from '../../../shared/errors.js';
import {
  decodeMeter,
  isMeterKeyEntry,
  meterKeyEntry,
  meterKeyOwner,
  putMeter,
  type MeterRecord,
} from '../../../shared/meters/record.js';
import { toRecord, type MeterRow } from './types.js';
import { lockMeter, metersAfter } from './store.js';

/**
 * The control plane's side of the meter registry: Postgres is the truth, the NATS KV meter bucket the copy
 * every ingress holds in memory.
 *
 * Writers change the row inside a transaction and `put` the KV record *before* COMMIT, while they hold the
 * row lock: a KV failure rolls the change back (503), and once the 201/200 is sent every ingress can read
 * the record. What is left is a commit failing (or the process dying) after the put: KV then says something
 * Postgres doesn't. `reconcile()` repairs that on api start and periodically, under the same row lock, so it
 * never overwrites a newer write in flight.
 */
export class MeterRegistryWriter {
  private constructor(
    readonly kv: KV,
    private readonly pg: PgPool,
    private readonly log: Logger,
  ) {}

  static async open(nats: NatsConnection, bucket: string, pg: PgPool, log: Logger): Promise<MeterRegistryWriter> {
    return new MeterRegistryWriter(await new Kvm(nats).open(bucket), pg, log);
  }

  /** Publishes the record; throws 503 when JetStream doesn't acknowledge it (the caller's transaction rolls back). */
  async put(row: MeterRow, keySet: boolean): Promise<void> {
    try {
      const record = toRecord(row);
      if (keySet && record.key) await this.kv.put(meterKeyEntry(meterKeyOwner(record), record.key), record.id);
      await putMeter(this.kv, record);
    } catch (err) {
      this.log.error({ err, meter_id: row.id }, 'meter registry write failed');
      throw new UnavailableError('The meter registry (NATS) did not acknowledge the change; nothing was changed.');
    }
  }

  /**
   * Makes the bucket equal to Postgres: records missing or different are rewritten, records of meters that
   * don't exist are deleted once older than `orphanGraceMs` (younger ones may belong to a create still in
   * its transaction).
   */
  async reconcile(
    opts: { orphanGraceMs?: number } = {},
  ): Promise<{ checked: number; repaired: number; removed: number }> {
    const grace = opts.orphanGraceMs ?? 60_000;
    const stats = { checked: 0, repaired: 0, removed: 0 };
    const keys = new Set<string>();
    const keyEntries = new Set<string>();
    for await (const k of await this.kv.keys()) (isMeterKeyEntry(k) ? keyEntries : keys).add(k);

    let after = '';
    for (;;) {
      const rows = await metersAfter(this.pg, after, 500);
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.id;
      await inBatches(rows, 16, async (row) => {
        stats.checked++;
        const inKv = keys.delete(row.id) ? await this.current(row.id) : null;
        if (!sameRecord(inKv, toRecord(row)) && (await this.repair(row.id))) stats.repaired++;
        // A key is fixed once set, so its entry is only ever missing (a put lost before its commit), never wrong.
        const keyEntry = row.key ? meterKeyEntry(meterKeyOwner(toRecord(row)), row.key) : null;
        if (keyEntry && !keyEntries.has(keyEntry)) {
          await this.kv.put(keyEntry, row.id);
          stats.repaired++;
        }
      });
    }

    const now = Date.now();
    await inBatches([...keys], 16, async (id) => {
      const rec = await this.current(id);
      if (rec && now - rec.updated_at_ms < grace) return;
      if (await this.repair(id)) stats.removed++;
    });
    if (stats.repaired || stats.removed) this.log.warn(stats, 'meter registry reconciled');
    return stats;
  }

  /** Under the row lock: rewrite the record from Postgres, or delete it when the meter doesn't exist. True if it changed KV. */
  private async repair(id: string): Promise<boolean> {
    return withTransaction(this.pg, async (c: PgClient) => {
      const row = await lockMeter(c, id);
      if (!row) {
        const e = await this.kv.get(id);
        if (!e || e.operation !== 'PUT') return false;
        await this.kv.delete(id);
        return true;
      }
      const inKv = await this.current(id);
      const want = toRecord(row);
      if (sameRecord(inKv, want)) return false;
      await putMeter(this.kv, want);
      return true;
    });
  }

  private async current(id: string): Promise<MeterRecord | null> {
    const e: KvEntry | null = await this.kv.get(id);
    if (!e || e.operation !== 'PUT') return null;
    return decodeMeter(e.string());
  }
}

function sameRecord(a: MeterRecord | null, b: MeterRecord): boolean {
  return (
    a !== null &&
    a.id === b.id &&
    a.account_id === b.account_id &&
    a.type === b.type &&
    a.aggregation === b.aggregation &&
    a.status === b.status &&
    a.name === b.name &&
    a.key === b.key &&
    a.scope === b.scope &&
    a.updated_at_ms === b.updated_at_ms
  );
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}
