/**
 * `stack up|down|status`: JSON on stdout, errors as JSON on stderr.
 * Exit codes: 0 ok, 1 failure, 2 usage.
 *
 * Can also be run directly: `node dist/infra/stack/cli.js up [--verbose]`
 * (root = $METERLINE_ROOT, else the nearest directory with a package.json above cwd).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { StackError } from './errors.js';
import { redactUrl } from './probe.js';
import { stackDown, stackProcesses, stackStatus, stackUp } from './stack.js';

const USAGE = 'usage: stack <up|down|status> [--verbose]';

function printError(e: unknown): void {
  const body =
    e instanceof StackError ? e.toJSON() : { error: e instanceof Error ? e.message || String(e) : String(e) };
  process.stderr.write(JSON.stringify(body) + '\n');
}

export async function stackCommand(args: string[], root: string): Promise<number> {
  const flags = args.filter((a) => a.startsWith('-'));
  const rest = args.filter((a) => !a.startsWith('-'));
  const verbose = flags.some((f) => f === '-v' || f === '--verbose');
  const unknown = flags.filter((f) => !['-v', '--verbose'].includes(f));
  const cmd = rest[0];
  if (rest.length !== 1 || unknown.length > 0 || (cmd !== 'up' && cmd !== 'down' && cmd !== 'status')) {
    process.stderr.write(JSON.stringify({ error: USAGE }) + '\n');
    return 2;
  }
  const log = verbose ? (m: string) => process.stderr.write(`[stack] ${m}\n`) : undefined;
  try {
    let out: unknown;
    if (cmd === 'up') out = await stackUp({ root, log });
    else if (cmd === 'down') out = await stackDown({ root });
    else out = { ...(await stackStatus({ root })), processes: await stackProcesses({ root }) };
    // Passwords stay in .data/credentials.json: every URL is printed without its password.
    process.stdout.write(JSON.stringify(out, (_k, v: unknown) => (typeof v === 'string' ? redactUrl(v) : v), 2) + '\n');
    return 0;
  } catch (e) {
    printError(e);
    return 1;
  }
}

function findRoot(start: string): string {
  let dir = path.resolve(start);
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start);
    dir = parent;
  }
}

const invokedDirectly = (() => {
  try {
    return process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  const root = process.env.METERLINE_ROOT || findRoot(process.cwd());
  stackCommand(process.argv.slice(2), root).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      printError(e);
      process.exitCode = 1;
    },
  );
}
