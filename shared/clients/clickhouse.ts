import { createClient, type ClickHouseClient } from '@clickhouse/client';

export type { ClickHouseClient };

export function createClickhouse(url: string, database?: string): ClickHouseClient {
  return createClient({
    url,
    database,
    request_timeout: 30_000,
    compression: { request: false, response: false },
    max_open_connections: 16,
  });
}
