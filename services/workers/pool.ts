import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { UnavailableError } from '../../shared/errors.js';
import type { InvoicePdfTask } from './invoice-pdf.js';
import type { CreditNotePdfTask } from './credit-note-pdf.js';
import type { InvoiceLinesTask, PricedInvoice } from '../domain/pricing/invoice-lines.js';
import type { InvoiceLinesPool } from '../domain/billing/deps.js';
import type { SignatureRequest, SignatureResult } from '../domain/webhooks/signing.js';

/**
 * piscina pools for CPU-bound work kept off the event loop (docs/design.md §2: PDF rendering, signatures).
 * Threads start on demand and exit after IDLE_TIMEOUT_MS idle, so a process that never renders an
 * invoice runs no extra threads. The caller owns the pool: create it on first use, destroy() it on stop.
 */
const IDLE_TIMEOUT_MS = 30_000;

export interface WorkerPoolOptions {
  /** Default: half the cores (at least 1); the event loop and the other api processes keep the rest. */
  maxThreads?: number;
  /** Tasks waiting for a thread before run() rejects (→ 503 with Retry-After, see runPooled). */
  maxQueue?: number;
}

export function createWorkerPool<Task, Result>(taskFile: URL, opts: WorkerPoolOptions = {}): Piscina<Task, Result> {
  const maxThreads = opts.maxThreads ?? Math.max(1, Math.floor(availableParallelism() / 2));
  return new Piscina<Task, Result>({
    filename: taskFile.href,
    name: 'default',
    minThreads: 0,
    maxThreads,
    maxQueue: opts.maxQueue ?? 64,
    idleTimeout: IDLE_TIMEOUT_MS,
  });
}

/** Runs a task; a full queue becomes 503 unavailable (the caller retries) instead of an unbounded backlog. */
export async function runPooled<Task, Result>(pool: Piscina<Task, Result>, task: Task, what: string): Promise<Result> {
  try {
    return await pool.run(task);
  } catch (err) {
    if (err instanceof Error && err.message === 'Task queue is at limit')
      throw new UnavailableError(`Too many ${what} requests at once; retry shortly.`, 1);
    throw err;
  }
}

/** The invoice PDF renderer (services/workers/invoice-pdf.ts); it returns the PDF's bytes. */
export function createInvoicePdfPool(opts?: WorkerPoolOptions): Piscina<InvoicePdfTask, Uint8Array> {
  return createWorkerPool<InvoicePdfTask, Uint8Array>(new URL('./invoice-pdf.js', import.meta.url), opts);
}

/** The credit note PDF renderer (services/workers/credit-note-pdf.ts); it returns the PDF's bytes. */
export function createCreditNotePdfPool(opts?: WorkerPoolOptions): Piscina<CreditNotePdfTask, Uint8Array> {
  return createWorkerPool<CreditNotePdfTask, Uint8Array>(new URL('./credit-note-pdf.js', import.meta.url), opts);
}

/**
 * Invoice line maths for the billing run (services/workers/invoice-lines.ts): many invoices per task, as the
 * pool the billing engine declares (services/domain/billing/deps.ts); a full queue is 503 (runPooled).
 */
export function createInvoiceLinesPool(opts?: WorkerPoolOptions): InvoiceLinesPool {
  const pool = createWorkerPool<InvoiceLinesTask, PricedInvoice[]>(new URL('./invoice-lines.js', import.meta.url), {
    maxQueue: 1024,
    ...opts,
  });
  return { run: (task) => runPooled(pool, task, 'invoice maths'), destroy: () => pool.destroy() };
}

/** Webhook request signatures (services/workers/webhook-signatures.ts), many requests per task. */
export function createWebhookSignaturePool(opts?: WorkerPoolOptions): Piscina<SignatureRequest[], SignatureResult[]> {
  return createWorkerPool<SignatureRequest[], SignatureResult[]>(
    new URL('./webhook-signatures.js', import.meta.url),
    opts,
  );
}
