/**
 * The NATS part of a backup: what JetStream holds that nothing else does, and what its streams need to resume.
 *
 * - USAGE is a work queue: it holds the records accepted (202) and not yet in ClickHouse. Each is saved with its
 *   headers and storage time. The consumer counts a message only if the stream stored it by its deadline (the
 *   ingress answered 503 otherwise) and never counts a void marker; the restore republishes exactly the
 *   messages the consumer would have counted, with a fresh deadline, and the target's consumers insert them.
 *   The target's stream first moves its sequence past the source's last one: a USAGE sequence names a message
 *   for good (stored rows may carry it), so the restored stream never hands out one the source used.
 * - EVENTS: the messages after the fan-out consumer's ack floor (read before the Postgres dump) — events
 *   relayed but maybe not yet turned into webhook deliveries. The restore republishes those whose event is in
 *   the restored Postgres (the fan-out records each delivery once).
 * - The KV buckets: token revocations and account limits live only there; the meter registry and the
 *   webhook-usage set are rebuilt from Postgres anyway, restored all the same.
 */
import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { jetstream, jetstreamManager, type StoredMsg } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import type { NatsConnection, NatsNames } from '../../shared/clients/nats.js';
import { HDR_COUNT, HDR_DEADLINE, HDR_VOID } from '../../shared/usage/wire.js';

interface SavedMessage {
  seq: number;
  subject: string;
  time_ms: number;
  headers: Record<string, string[]>;
  data: string;
}

export interface SavedStream {
  file: string;
  messages: number;
  /** Usage records in them (the Ml-Count headers). */
  records: number;
  /** The stream's sequences when the save began: every message it held then has first_seq ≤ seq ≤ last_seq. */
  first_seq: number;
  last_seq: number;
}

/** Messages asked for at once while saving a stream (one request each: a work queue allows no second reader). */
const FETCH_CONCURRENCY = 64;
/** Publishes awaited together while restoring (they keep their order: one connection). */
const PUBLISH_WINDOW = 256;

function headerRecord(h: MsgHdrs | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!h) return out;
  for (const k of h.keys()) out[k] = h.values(k);
  return out;
}

function lines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

function writer(file: string) {
  const out = createWriteStream(file, { mode: 0o600 });
  return {
    write: (v: unknown) => out.write(`${JSON.stringify(v)}\n`),
    close: () =>
      new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve()))),
  };
}

/** The fan-out consumer's ack floor: every EVENTS message up to it has its deliveries in Postgres. */
export async function eventsAckFloor(nc: NatsConnection, names: NatsNames): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.consumers.info(names.eventsStream, names.fanoutConsumer).catch(() => null);
  return info?.ack_floor.stream_seq ?? 0;
}

/** Messages of `stream` after `afterSeq`, as they are now (ones removed meanwhile are skipped). */
async function saveStream(nc: NatsConnection, stream: string, afterSeq: number, file: string): Promise<SavedStream> {
  const jsm = await jetstreamManager(nc);
  const state = (await jsm.streams.info(stream)).state;
  const out = writer(file);
  let messages = 0;
  let records = 0;
  const first = Math.max(state.first_seq, afterSeq + 1);
  for (let from = first; from <= state.last_seq; from += FETCH_CONCURRENCY) {
    const seqs = Array.from({ length: Math.min(FETCH_CONCURRENCY, state.last_seq - from + 1) }, (_, i) => from + i);
    const got = await Promise.all(
      // Consumed (USAGE) or aged out since the stream's state was read: not there any more.
      seqs.map((seq) => jsm.streams.getMessage(stream, { seq }).catch(() => null as StoredMsg | null)),
    );
    for (const m of got) {
      if (!m) continue;
      out.write({
        seq: m.seq,
        subject: m.subject,
        time_ms: m.time.getTime(),
        headers: headerRecord(m.header),
        data: Buffer.from(m.data).toString('base64'),
      } satisfies SavedMessage);
      messages++;
      records += Number(m.header?.get(HDR_COUNT) ?? 0);
    }
  }
  await out.close();
  return { file: path.basename(file), messages, records, first_seq: first, last_seq: state.last_seq };
}

export async function saveUsage(nc: NatsConnection, names: NatsNames, dir: string, file: string) {
  const saved = await saveStream(nc, names.usageStream, 0, path.join(dir, file));
  return { ...saved, file };
}

export async function saveEvents(nc: NatsConnection, names: NatsNames, dir: string, file: string, afterSeq: number) {
  const saved = await saveStream(nc, names.eventsStream, afterSeq, path.join(dir, file));
  return { file, messages: saved.messages, after_seq: afterSeq };
}

export async function saveBucket(nc: NatsConnection, bucket: string, dir: string, file: string): Promise<number> {
  const kv = await new Kvm(nc).open(bucket);
  const out = writer(path.join(dir, file));
  let keys = 0;
  for await (const key of await kv.keys()) {
    const e = await kv.get(key);
    if (!e || e.operation !== 'PUT') continue;
    out.write({ key, value: Buffer.from(e.value).toString('base64') });
    keys++;
  }
  await out.close();
  return keys;
}

export async function restoreBucket(nc: NatsConnection, bucket: string, file: string): Promise<number> {
  const kv = await new Kvm(nc).open(bucket);
  const entries = lines<{ key: string; value: string }>(file);
  for (const e of entries) await kv.put(e.key, Buffer.from(e.value, 'base64'));
  return entries.length;
}

/** What would make a restore unsafe on the target's NATS: messages already in USAGE, roles consuming. */
export async function natsInUse(nc: NatsConnection, names: NatsNames): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const problems: string[] = [];
  const usage = await jsm.streams.info(names.usageStream).catch(() => null);
  if (usage && usage.state.messages > 0) problems.push(`${names.usageStream} holds ${usage.state.messages} messages`);
  for (const [stream, consumer] of [
    [names.usageStream, names.usageConsumer],
    [names.eventsStream, names.fanoutConsumer],
  ] as const) {
    const info = await jsm.consumers.info(stream, consumer).catch(() => null);
    if (info && info.num_waiting > 0) problems.push(`a role is pulling from ${stream} (consumer ${consumer})`);
  }
  const apis = await new Kvm(nc)
    .open(names.apiProcessBucket)
    .then(async (kv) => {
      let n = 0;
      for await (const _ of await kv.keys()) n++;
      return n;
    })
    .catch(() => 0);
  if (apis > 0) problems.push(`${apis} api processes are running`);
  return problems;
}

/** Moves the (empty) USAGE stream's next sequence past `lastSeq`; returns the stream's first sequence after. */
export async function resumeUsageSequence(nc: NatsConnection, names: NatsNames, lastSeq: number): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(names.usageStream);
  if (state.last_seq < lastSeq) await jsm.streams.purge(names.usageStream, { seq: lastSeq + 1 });
  return (await jsm.streams.info(names.usageStream)).state.first_seq;
}

/** How long a republished usage message may wait in the target's stream before its consumers take it. */
const RESTORED_DEADLINE_MS = 7 * 24 * 3_600_000;

async function publishAll(items: (() => Promise<unknown>)[]): Promise<void> {
  for (let i = 0; i < items.length; i += PUBLISH_WINDOW)
    await Promise.all(items.slice(i, i + PUBLISH_WINDOW).map((f) => f()));
}

/**
 * USAGE messages the source's consumers would have counted, republished on the target's subjects (the account is
 * the subject's last token), in their order. Returns the messages and records republished.
 */
export async function restoreUsage(
  nc: NatsConnection,
  names: NatsNames,
  file: string,
): Promise<{ messages: number; records: number; skipped: number }> {
  const js = jetstream(nc);
  let records = 0;
  let skipped = 0;
  const sends: (() => Promise<unknown>)[] = [];
  for (const m of lines<SavedMessage>(file)) {
    const deadline = Number(m.headers[HDR_DEADLINE]?.[0]);
    if (m.headers[HDR_VOID] || !(m.time_ms <= deadline)) {
      skipped++;
      continue;
    }
    const h = natsHeaders();
    for (const [k, vs] of Object.entries(m.headers)) {
      if (k === HDR_DEADLINE || k === 'Nats-Msg-Id') continue;
      for (const v of vs) h.append(k, v);
    }
    h.set(HDR_DEADLINE, String(Date.now() + RESTORED_DEADLINE_MS));
    const account = m.subject.slice(m.subject.lastIndexOf('.') + 1);
    const data = Buffer.from(m.data, 'base64');
    sends.push(() => js.publish(names.usageSubject(account), data, { headers: h }));
    records += Number(m.headers[HDR_COUNT]?.[0] ?? 0);
  }
  await publishAll(sends);
  return { messages: sends.length, records, skipped };
}

/** EVENTS messages whose event the restored Postgres has (`known`), on the target's subjects, deduplicated by id. */
export async function restoreEvents(
  nc: NatsConnection,
  names: NatsNames,
  file: string,
  known: (ids: string[]) => Promise<Set<string>>,
): Promise<number> {
  const saved = lines<SavedMessage>(file).map((m) => ({
    m,
    event: JSON.parse(Buffer.from(m.data, 'base64').toString()) as { id: unknown; type: unknown },
  }));
  const present = await known(saved.map((s) => String(s.event.id)));
  const js = jetstream(nc);
  const sends = saved
    .filter(({ event }) => present.has(String(event.id)))
    .map(
      ({ m, event }) =>
        () =>
          js.publish(names.eventSubject(String(event.type)), Buffer.from(m.data, 'base64'), {
            msgID: String(event.id),
          }),
    );
  await publishAll(sends);
  return sends.length;
}
