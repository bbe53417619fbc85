/** A process role: api, consumer, dispatcher, billing. */
export interface Service {
  readonly name: string;
  start(): Promise<void>;
  /** Idempotent; drains in order: close ingress → drain consumers → flush publishers → close pools. */
  stop(): Promise<void>;
  health(): Promise<HealthReport>;
}

export interface HealthReport {
  ok: boolean;
  /** Per dependency or component: true when it answers. */
  checks: Record<string, { ok: boolean; detail?: string }>;
}

/** Runs `fn` once; later callers get the same promise. Makes stop() idempotent. */
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
