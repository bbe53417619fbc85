import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '../clients/nats.js';

/**
 * The cluster-wide half of a per-account rate (docs/limits.md, "Limits across processes"): one token bucket
 * per (policy, account) in a NATS KV bucket, `{t: tokens, at: epoch ms}`, refilled at the limit's rate up to
 * one window's worth. Api processes take tokens from it in leases, by compare-and-set, and spend them locally
 * without I/O. Every token any process spends came out of this bucket, so all processes together never admit
 * more than the limit plus one window's burst, however many they are and however the traffic is spread — and
 * one process alone may lease all of it.
 */
export interface BucketShape {
  /** Tokens when full: one window's worth (the limit). */
  capacity: number;
  /** Refill per millisecond. */
  perMs: number;
}

/** A lease: admitted when the shared bucket holds `need`; then `take` (maybe more than it holds: debt) plus up to `extra`. */
export interface LeaseRequest {
  need: number;
  take: number;
  extra: number;
}

export interface LeaseResult {
  /** Tokens granted to this process (0: refused, nothing taken). */
  granted: number;
  /** Tokens the shared bucket holds after the lease (negative: in debt). */
  left: number;
  /** When (epoch ms) `left` was true. */
  at: number;
}

interface SharedState {
  t: number;
  at: number;
}

/** The tokens of a shared bucket at `now` (an absent entry is a full bucket: it expired long after refilling). */
export function refilled(state: SharedState | undefined, shape: BucketShape, now: number): number {
  if (!state) return shape.capacity;
  return Math.min(shape.capacity, state.t + Math.max(0, now - state.at) * shape.perMs);
}

/**
 * How many tokens a lease gets from a bucket holding `available`: nothing below `need`; else `take` — which
 * may exceed what is there (one request larger than the whole bucket passes when the bucket is full and
 * leaves it in debt) — plus up to `extra` of what remains.
 */
export function grantFrom(available: number, r: LeaseRequest): number {
  if (available < r.need) return 0;
  return r.take + Math.min(r.extra, Math.max(0, available - r.take));
}

/**
 * A compare-and-set that lost to another process reads and tries again, for up to this long: losing means the
 * other one's write went through, so under contention every round still makes progress. A fixed number of
 * attempts ran out on a loaded machine with sixteen emitters over two processes, and the process then enforced
 * alone, on top of the shared bucket (docs/limits.md, "NATS unreachable").
 */
const CAS_DEADLINE_MS = 10_000;

function isConflict(err: unknown): boolean {
  const e = err as { code?: number; message?: string };
  return e.code === 10071 || e.code === 10164 || /wrong last sequence/i.test(e.message ?? '');
}

function decode(text: string): SharedState | undefined {
  try {
    const v = JSON.parse(text) as SharedState;
    return Number.isFinite(v.t) && Number.isFinite(v.at) ? v : undefined;
  } catch {
    return undefined;
  }
}

export class RateLeases {
  private connected = true;

  constructor(
    private readonly kv: KV,
    nc?: NatsConnection,
  ) {
    if (nc) void this.watch(nc);
  }

  static async open(nc: NatsConnection, bucket: string): Promise<RateLeases> {
    return new RateLeases(await new Kvm(nc).open(bucket), nc);
  }

  /** Whether the connection to NATS is up now (a lease may still be slow: a loaded server or machine). */
  get reachable(): boolean {
    return this.connected;
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'staleConnection' || s.type === 'close') this.connected = false;
      else if (s.type === 'reconnect') this.connected = true;
    }
    this.connected = false;
  }

  /** Takes a lease from the shared bucket `key`; throws when NATS can't be asked. */
  async lease(key: string, shape: BucketShape, request: LeaseRequest): Promise<LeaseResult> {
    return this.modify(key, shape, (available) => grantFrom(available, request));
  }

  /** Gives back tokens a process leased and did not spend (the bucket never holds more than its capacity). */
  async giveBack(key: string, shape: BucketShape, tokens: number): Promise<void> {
    await this.modify(key, shape, (available) => -Math.min(tokens, Math.max(0, shape.capacity - available)));
  }

  /** Compare-and-set: `change(available)` tokens leave the bucket (negative: come back); 0 writes nothing. */
  private async modify(key: string, shape: BucketShape, change: (available: number) => number): Promise<LeaseResult> {
    const deadline = Date.now() + CAS_DEADLINE_MS;
    for (;;) {
      const entry = await this.kv.get(key);
      const state = entry && entry.operation === 'PUT' ? decode(entry.string()) : undefined;
      const now = Date.now();
      const available = refilled(state, shape, now);
      const granted = change(available);
      if (granted === 0) return { granted: 0, left: available, at: now };
      const next = JSON.stringify({ t: available - granted, at: now } satisfies SharedState);
      try {
        if (entry) await this.kv.update(key, next, entry.revision);
        else await this.kv.create(key, next);
        return { granted, left: available - granted, at: now };
      } catch (err) {
        // Another process changed the bucket since the read: read it again.
        if (!isConflict(err) || Date.now() > deadline) throw err;
      }
    }
  }
}
