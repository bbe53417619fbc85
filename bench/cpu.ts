/** CPU time of processes, from /proc (Linux), to say where the two cores went during a phase. */
import { readFileSync } from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ on Linux

/** CPU seconds of a process (and its reaped children); `kernel` = system time only. */
export function cpuSeconds(pid: number, kernel = false): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime are fields 14–17 (1-based) → indexes 11–14 after the comm field.
    return (
      (kernel ? Number(f[12]) + Number(f[14]) : Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) /
      TICKS_PER_S
    );
  } catch {
    return NaN;
  }
}

const alive = (x: number) => (Number.isNaN(x) ? 0 : x);

/**
 * CPU seconds the whole machine has been busy (every core, every process, interrupts included: /proc/stat's
 * user + nice + system + irq + softirq + steal). Issue 45 states its ratios as the whole machine's CPU less the
 * load generator's: that counts the kernel's network work for the loopback connections, which no process's
 * own time holds.
 */
export function machineBusySeconds(): number {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).map(Number);
    // cpu user nice system idle iowait irq softirq steal …
    return (f[1]! + f[2]! + f[3]! + f[6]! + f[7]! + f[8]!) / TICKS_PER_S;
  } catch {
    return NaN;
  }
}

export class CpuMeter {
  private start = new Map<string, number>();
  private startKernel = new Map<string, number>();
  private t0 = 0;
  private machineStart = 0;
  constructor(private readonly groups: () => Record<string, number[]>) {}

  begin(): void {
    this.t0 = performance.now();
    this.machineStart = machineBusySeconds();
    this.start = new Map(
      Object.entries(this.groups()).map(([k, pids]) => [k, pids.reduce((s, p) => s + alive(cpuSeconds(p)), 0)]),
    );
    this.startKernel = new Map(
      Object.entries(this.groups()).map(([k, pids]) => [k, pids.reduce((s, p) => s + alive(cpuSeconds(p, true)), 0)]),
    );
  }

  /** CPU seconds per group since begin() (user + system), without ending the measurement. */
  usedSeconds(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, pids] of Object.entries(this.groups()))
      out[k] = pids.reduce((s, p) => s + alive(cpuSeconds(p)), 0) - (this.start.get(k) ?? 0);
    return out;
  }

  /** The whole machine's busy CPU seconds since begin() less the load generator group's. */
  machineLessGeneratorSeconds(): number {
    return machineBusySeconds() - this.machineStart - (this.usedSeconds().load_generator ?? 0);
  }

  /** Cores used per group since begin() (1.0 = one core busy the whole time). */
  end(): Record<string, number> {
    const wall = (performance.now() - this.t0) / 1000;
    const out: Record<string, number> = {};
    for (const [k, pids] of Object.entries(this.groups())) {
      // A process gone since begin() (wrk) counts in its parent's cutime once reaped: skip it here.
      const used = pids.reduce((s, p) => s + alive(cpuSeconds(p)), 0) - (this.start.get(k) ?? 0);
      const kernel = pids.reduce((s, p) => s + alive(cpuSeconds(p, true)), 0) - (this.startKernel.get(k) ?? 0);
      out[k] = Math.round((used / wall) * 100) / 100;
      out[`${k}_kernel`] = Math.round((kernel / wall) * 100) / 100;
    }
    return out;
  }
}
