/**
 * Shared types for the local-stack launcher. Kept in a leaf module so that
 * install.ts and servers.ts can both use them without an import cycle;
 * servers.ts re-exports everything here.
 */

export type ServerName = 'postgres' | 'nats' | 'clickhouse' | 'zookeeper' | 'smtp' | 'stripe' | 's3';

/**
 * The servers meterline connects to (one URL setting each). ZooKeeper only serves ClickHouse's replication; the
 * single stack's SMTP server (smtp.ts) is optional for meterline and listed apart (topology.ts).
 */
export const SERVER_NAMES: readonly Exclude<ServerName, 'zookeeper' | 'smtp' | 'stripe' | 's3'>[] = [
  'postgres',
  'nats',
  'clickhouse',
];

export class StackError extends Error {
  /** When several servers failed at once (stackUp), the individual failures. */
  failures?: StackError[];

  constructor(
    message: string,
    readonly server?: ServerName,
    readonly logFile?: string,
  ) {
    super(message);
    this.name = 'StackError';
  }

  toJSON(): { error: string; server?: ServerName; log_file?: string; failures?: unknown[] } {
    const out: { error: string; server?: ServerName; log_file?: string; failures?: unknown[] } = {
      error: this.message,
    };
    if (this.server) out.server = this.server;
    if (this.logFile) out.log_file = this.logFile;
    if (this.failures && this.failures.length > 0) out.failures = this.failures.map((f) => f.toJSON());
    return out;
  }
}
