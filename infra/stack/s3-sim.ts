/**
 * The S3 simulator (test/s3-sim/, docs/exports.md): an S3-compatible HTTP server for the export tests
 * (test/fixtures/s3.ts). Launched like the other servers — its own process, pid file, log and readiness probe —
 * from the compiled `dist/test/s3-sim/main.js`. Its objects persist under `<dir>/data`, so a restart keeps them.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, named, type ServerHandle } from './launch.js';
import { httpGet, probing, urlHost, type ProbeResult } from './probe.js';

const MAIN = fileURLToPath(new URL('../../test/s3-sim/main.js', import.meta.url));

export interface S3SimOptions {
  dir: string;
  port: number;
  host?: string;
  /** The access keys it accepts: id → secret. */
  keys: Record<string, string>;
  timeoutMs?: number;
}

export const s3SimUrl = (port: number, host = '127.0.0.1') => `http://${urlHost(host)}:${port}`;

function probeS3Sim(url: string): Promise<ProbeResult> {
  return probing(async () => {
    const r = await httpGet(new URL('/_sim/health', url));
    return r.status === 200 ? { ok: true, detail: 's3 simulator' } : { ok: false, detail: `HTTP ${r.status}` };
  });
}

export function startS3SimServer(o: S3SimOptions): Promise<ServerHandle> {
  return named('s3', async () => {
    const dir = path.resolve(o.dir);
    const host = o.host ?? '127.0.0.1';
    await mkdir(dir, { recursive: true });
    const logFile = path.join(dir, 's3-sim.log');
    const keyArgs = Object.entries(o.keys).flatMap(([id, secret]) => ['--key', `${id}:${secret}`]);
    return launch({
      server: 's3',
      command: { command: process.execPath, args: [MAIN] },
      args: ['--host', host, '--port', String(o.port), '--dir', path.join(dir, 'data'), ...keyArgs],
      dir,
      stdoutLog: logFile,
      logFile,
      url: s3SimUrl(o.port, host),
      probe: probeS3Sim,
      stopSignal: 'SIGTERM',
      ports: [{ port: o.port, role: 'http port' }],
      host,
      timeoutMs: o.timeoutMs,
    });
  });
}
