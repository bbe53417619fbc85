/**
 * Operator tools meterline's own checks use, from Debian like the servers: HAProxy (the load balancer in
 * front of the api processes of several hosts, docs/hosts.md), promtool (the `prometheus`
 * package: checks and unit-tests the alert rules, docs/metrics.md) and systemd-analyze (checks the units).
 */
import { ensureInstalled, findOnPath, type Installable } from './install.js';

/** A program from a Debian package, found on PATH. */
export function tool(name: string, debianPackage: string, binary: string): Installable {
  return {
    name,
    debianPackage,
    binaryDescription: binary,
    command: () => {
      const p = findOnPath(binary);
      return p ? { command: p, args: [] } : null;
    },
  };
}

export const TOOLS = {
  haproxy: tool('haproxy', 'haproxy', 'haproxy'),
  promtool: tool('promtool', 'prometheus', 'promtool'),
  systemdAnalyze: tool('systemd-analyze', 'systemd', 'systemd-analyze'),
} as const;

/** The tool's executable, installing its Debian package first when it is missing (as the servers are). */
export async function toolPath(t: Installable): Promise<string> {
  await ensureInstalled(t);
  return t.command()!.command;
}
