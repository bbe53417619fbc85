import { jetstreamManager, type ConsumerConfig, type ConsumerInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** How long a role keeps trying to set its durable consumer up before it gives up (and its supervisor restarts it). */
export const DURABLE_SETUP_DEADLINE_MS = 60_000;
const RETRY_EVERY_MS = 250;

/**
 * Whether a JetStream API call failed only for now: no answer in the client's time (a meta leader just elected,
 * or busy on a loaded machine: a fresh cluster's CI once lost a consumer role to it), no responder yet, or the
 * JetStream system saying it is temporarily unavailable.
 */
export function isTransientJetStreamError(err: unknown): boolean {
  const e = err as { name?: string; message?: string; isNoResponders?: () => boolean } | undefined;
  if (!e) return false;
  if (e.name === 'TimeoutError' || e.isNoResponders?.()) return true;
  return /timeout|temporarily unavailable|no responders/i.test(e.message ?? '');
}

/** `op` until it succeeds, retrying transient JetStream failures until `deadlineMs` from now. */
export async function retryTransient<T>(op: () => Promise<T>, deadlineMs = DURABLE_SETUP_DEADLINE_MS): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await op();
    } catch (err) {
      if (!isTransientJetStreamError(err) || Date.now() >= until) throw err;
      await new Promise((r) => setTimeout(r, RETRY_EVERY_MS));
    }
  }
}

/**
 * Makes sure the durable consumer `config.durable_name` of `stream` exists, and applies `update` (the fields that
 * differ, or nothing) to one that does. Every process of a role runs this at start, several at once on a fresh
 * cluster: each may find none and add it, so an add that fails is followed by a fresh look (another process's add
 * won), and transient failures are retried (retryTransient).
 */
export async function ensureDurableConsumer(
  nc: NatsConnection,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
  update?: (existing: ConsumerInfo) => Partial<ConsumerConfig> | undefined,
  deadlineMs = DURABLE_SETUP_DEADLINE_MS,
): Promise<void> {
  const name = config.durable_name;
  await retryTransient(async () => {
    const jsm = await jetstreamManager(nc);
    const existing = await jsm.consumers.info(stream, name).catch(() => null);
    if (!existing) {
      try {
        await jsm.consumers.add(stream, config);
      } catch (err) {
        if (isTransientJetStreamError(err) || !(await jsm.consumers.info(stream, name).catch(() => null))) throw err;
      }
      return;
    }
    const changes = update?.(existing);
    if (changes) await jsm.consumers.update(stream, name, changes);
  }, deadlineMs);
}
