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

export class CpuMeter {
  private start = new Map<string, number>();
  private startKernel = new Map<string, number>();
  private t0 = 0;
  constructor(private readonly groups: () => Record<string, number[]>) {}

  begin(): void {
    this.t0 = performance.now();
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
