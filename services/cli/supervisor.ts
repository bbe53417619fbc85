import { fork, type ChildProcess } from 'node:child_process';
import { repoPath } from '../../shared/paths.js';
import type { Role } from '../roles.js';
import { printError } from './output.js';

interface Managed {
  role: Role;
  child: ChildProcess | null;
  restarts: number;
  port?: number;
}

const MAX_BACKOFF_MS = 30_000;
const STOP_GRACE_MS = 15_000;

/**
 * Runs every role as its own process, restarts a crashed one with backoff, and stops them in order
 * (api first: close ingress → consumer drains → dispatcher and billing flush).
 */
export class Supervisor {
  private readonly managed: Managed[];
  private stopping = false;

  constructor(
    roles: readonly Role[],
    /** The environment of each role's process (each role connects with its own credentials). */
    private readonly envOf: (role: Role) => NodeJS.ProcessEnv,
  ) {
    this.managed = roles.map((role) => ({ role, child: null, restarts: 0 }));
  }

  /** Starts every role and resolves once each reported ready. */
  async start(): Promise<Record<string, { pid: number; port?: number }>> {
    await Promise.all(this.managed.map((m) => this.spawn(m)));
    return Object.fromEntries(this.managed.map((m) => [m.role, { pid: m.child!.pid!, port: m.port }]));
  }

  private spawn(m: Managed): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = fork(repoPath('dist/services/main.js'), [m.role], {
        env: this.envOf(m.role),
        // Role logs go to our stderr so that stdout carries only the CLI's JSON.
        stdio: ['ignore', 2, 2, 'ipc'],
        // Own process group: a terminal's Ctrl-C reaches only the supervisor, which stops the roles in order.
        // A role whose supervisor dies sees its IPC channel close and stops itself (services/main.ts).
        detached: true,
      });
      m.child = child;
      let ready = false;
      child.on('message', (msg: { type?: string; port?: number }) => {
        if (msg?.type === 'ready' && !ready) {
          ready = true;
          m.port = msg.port;
          resolve();
        }
      });
      child.on('exit', (code, signal) => {
        if (m.child === child) m.child = null;
        if (!ready) {
          reject(new Error(`role ${m.role} exited before it was ready (code ${code}, signal ${signal})`));
          return;
        }
        if (this.stopping) return;
        const delay = Math.min(1000 * 2 ** m.restarts, MAX_BACKOFF_MS);
        printError(`role ${m.role} exited unexpectedly`, { role: m.role, code, signal, restart_in_ms: delay });
        if (code === 78) return; // misconfigured: restarting cannot help
        m.restarts++;
        setTimeout(() => {
          if (this.stopping) return;
          this.spawn(m).then(
            () => printError(`role ${m.role} restarted`, { role: m.role, pid: m.child?.pid }),
            (err) => printError(`role ${m.role} failed to restart`, { role: m.role, reason: (err as Error).message }),
          );
        }, delay).unref();
      });
    });
  }

  /** Stops roles one by one in start order; idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const m of this.managed) {
      const child = m.child;
      if (!child || child.exitCode !== null) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      });
      m.child = null;
    }
  }
}
