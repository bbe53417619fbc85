/**
 * A local SMTP server (Debian's `python3-aiosmtpd`) for invoice emails (docs/emails.md): the local stack's
 * SMTP_URL for `npm start`, and the real server the email tests send through. It accepts every message on
 * loopback and delivers it into a Maildir (`<dir>/mailbox`, one file per message under `new/`), where a test or a
 * developer reads what a customer would have received. No authentication, no TLS: it never relays anywhere.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { launch, named, requireCommand, type InstanceOptions, type Ports, type ServerKind } from './launch.js';
import { PROBE_TIMEOUT_MS, probing, stripBrackets, urlHost, type ProbeResult } from './probe.js';
import { errMessage } from './process.js';

/** Debian's interpreter: the package installs the module for it (a python3 earlier on PATH may be another one). */
const PYTHON = '/usr/bin/python3';
const MODULE_DIR = '/usr/lib/python3/dist-packages/aiosmtpd';

/** Where the server of `dir` delivers: a Maildir. */
export function smtpMailbox(dir: string): string {
  return path.join(dir, 'mailbox');
}

/** Ready = it greets with `220`. */
function askGreeting(host: string, port: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let buf = '';
    const sock = net.connect({ host, port });
    const finish = (r: ProbeResult) => {
      sock.destroy();
      resolve(r);
    };
    sock.setTimeout(PROBE_TIMEOUT_MS, () =>
      finish({ ok: false, detail: `no greeting from ${host}:${port} within ${PROBE_TIMEOUT_MS} ms` }),
    );
    sock.on('error', (e) => finish({ ok: false, detail: errMessage(e) }));
    sock.on('data', (d) => {
      buf += d.toString('utf8');
      if (buf.includes('\n'))
        finish(
          /^220[ -]/.test(buf)
            ? { ok: true, detail: 'smtp' }
            : { ok: false, detail: `not an SMTP greeting: ${JSON.stringify(buf.slice(0, 80))}` },
        );
    });
  });
}

function probeSmtp(url: string): Promise<ProbeResult> {
  return probing(async () => {
    const u = new URL(url);
    return askGreeting(stripBrackets(u.hostname) || '127.0.0.1', Number(u.port));
  });
}

export const smtp: ServerKind = {
  name: 'smtp',
  debianPackage: 'python3-aiosmtpd',
  binaryDescription: `${PYTHON} with the aiosmtpd module (${MODULE_DIR})`,
  command: () => (existsSync(PYTHON) && existsSync(MODULE_DIR) ? { command: PYTHON, args: ['-m', 'aiosmtpd'] } : null),
  stopSignal: 'SIGTERM',
  urlVariable: null,
  defaultPorts: { smtp: 52525 },
  // Open on loopback: it only receives.
  userOf: { admin: '', migrate: '', api: '', consumer: '', dispatcher: '', billing: '' },
  logFile: (dir) => path.join(dir, 'smtp.log'),
  url: (ports: Ports, host = '127.0.0.1') => `smtp://${urlHost(host)}:${ports.smtp}`,
  start: (o: InstanceOptions) =>
    named('smtp', async () => {
      const dir = path.resolve(o.dir);
      const host = o.host ?? '127.0.0.1';
      await mkdir(dir, { recursive: true });
      const logFile = smtp.logFile(dir);
      return launch({
        server: 'smtp',
        command: requireCommand(smtp),
        // -n: stay the user we are (no setuid to nobody); the Mailbox handler writes a Maildir.
        args: ['-n', '-l', `${urlHost(host)}:${o.ports.smtp}`, '-c', 'aiosmtpd.handlers.Mailbox', smtpMailbox(dir)],
        dir,
        stdoutLog: logFile,
        logFile,
        url: smtp.url(o.ports, host),
        probe: smtp.probe,
        stopSignal: smtp.stopSignal,
        ports: [{ port: o.ports.smtp!, role: 'smtp port' }],
        host,
        timeoutMs: o.timeoutMs,
      });
    }),
  probe: probeSmtp,
};
