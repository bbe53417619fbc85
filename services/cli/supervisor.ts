import { fork, type ChildProcess } from 'node:child_process';
import { repoPath } from '../../shared/paths.js';
import type { Role } from '../role-names.js';
import { printError } from './output.js';

interface Managed {
  /** The role, numbered when it runs in several processes (`api-2`). */
  name: string;
  role: Role;
  child: ChildProcess | null;
  restarts: number;
  port?: number;
}

/** A role process as `meterline stack status` lists it. */
export interface RoleProcess {
  name: string;
  kind: Role;
  pid: number;
  ports: number[];
}

const MAX_BACKOFF_MS = 30_000;
const STOP_GRACE_MS = 15_000;

/**
 * Runs every role as its own process (`copies` processes of each: the cluster topology runs two), restarts
 * a crashed or killed one with backoff, and stops them in order (api first: close ingress → consumer drains
 * → dispatcher and billing flush). Every (re)start is reported to `onChange` with the live processes.
 */
export class Supervisor {
  private readonly managed: Managed[];
  private stopping = false;

  constructor(
    roles: readonly Role[],
    /** The environment of each role's process (each role connects with its own credentials). */
    private readonly envOf: (role: Role) => NodeJS.ProcessEnv,
    copies = 1,
    private readonly onChange: (processes: RoleProcess[]) => void = () => undefined,
  ) {
    this.managed = roles.flatMap((role) =>
      Array.from({ length: copies }, (_v, i) => ({
        name: copies === 1 ? role : `${role}-${i + 1}`,
        role,
        child: null,
        restarts: 0,
      })),
    );
  }

  /** The live role processes. */
  processes(): RoleProcess[] {
    return this.managed
      .filter((m) => m.child?.pid !== undefined && m.child.exitCode === null)
      .map((m) => ({ name: m.name, kind: m.role, pid: m.child!.pid!, ports: m.port ? [m.port] : [] }));
  }

  /** Starts every role and resolves once each reported ready. */
  async start(): Promise<Record<string, { pid: number; port?: number }>> {
    await Promise.all(this.managed.map((m) => this.spawn(m)));
    return Object.fromEntries(this.managed.map((m) => [m.name, { pid: m.child!.pid!, port: m.port }]));
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
          this.onChange(this.processes());
          resolve();
        }
      });
      child.on('exit', (code, signal) => {
        if (m.child === child) m.child = null;
        if (!this.stopping) this.onChange(this.processes());
        if (!ready) {
          reject(new Error(`role ${m.name} exited before it was ready (code ${code}, signal ${signal})`));
          return;
        }
        if (this.stopping) return;
        printError(`role ${m.name} exited unexpectedly`, { role: m.name, code, signal });
        if (code === 78) return; // misconfigured: restarting cannot help
        this.restartLater(m);
      });
    });
  }

  /** Restarts with backoff; a restart that fails before ready (a server still down) is tried again later. */
  private restartLater(m: Managed): void {
    const delay = Math.min(1000 * 2 ** m.restarts, MAX_BACKOFF_MS);
    m.restarts++;
    setTimeout(() => {
      if (this.stopping) return;
      this.spawn(m).then(
        () => printError(`role ${m.name} restarted`, { role: m.name, pid: m.child?.pid }),
        (err) => {
          printError(`role ${m.name} failed to restart; retrying`, { role: m.name, reason: (err as Error).message });
          if (!this.stopping) this.restartLater(m);
        },
      );
    }, delay).unref();
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
