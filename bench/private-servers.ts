/**
 * A NATS and a ClickHouse server of the benchmark's own, on free ports under a temporary directory.
 *
 * Why: the pipeline's cost per record (docs/design.md §11) includes what NATS and ClickHouse spend, read from
 * /proc/<pid>/stat. On the shared stack those processes also serve every other test and user of the
 * machine, so their CPU time would not be ours. Postgres is not on the ingest path and stays shared.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClickhouse, startNats, type ServerHandle } from '../infra/stack/servers.js';
import { benchPort as freePort } from './ports.js';

export interface PrivateServers {
  natsUrl: string;
  clickhouseUrl: string;
  natsPid: number;
  clickhousePid: number;
  stop(): Promise<void>;
}

export async function startPrivateServers(streamBytes: number): Promise<PrivateServers> {
  const dir = await mkdtemp(join(tmpdir(), 'meterline-bench-'));
  const started: ServerHandle[] = [];
  const stop = async () => {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const nats = await startNats({ dir: join(dir, 'nats'), port: await freePort(), maxStoreBytes: streamBytes * 2 });
    started.push(nats);
    const ch = await startClickhouse({
      dir: join(dir, 'clickhouse'),
      httpPort: await freePort(),
      tcpPort: await freePort(),
      interserverPort: await freePort(),
    });
    started.push(ch);
    return { natsUrl: nats.url, clickhouseUrl: ch.url, natsPid: nats.pid, clickhousePid: ch.pid, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
