/** CLI convention: results as JSON on stdout, errors as JSON on stderr, meaningful exit codes. */
export const EXIT = { ok: 0, failure: 1, usage: 2, config: 78 } as const;

export function printResult(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printError(message: string, extra: Record<string, unknown> = {}): void {
  process.stderr.write(JSON.stringify({ error: message, ...extra }) + '\n');
}

export class UsageError extends Error {}

/** Parses `--name value`, repeated flags and bare `--flag` booleans. */
export function parseFlags(
  args: string[],
  spec: { strings?: string[]; multi?: string[]; booleans?: string[] },
): Record<string, string | string[] | boolean> {
  const out: Record<string, string | string[] | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    let name = arg.slice(2);
    let inline: string | undefined;
    const eq = name.indexOf('=');
    if (eq !== -1) {
      inline = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    if (spec.booleans?.includes(name)) {
      out[name] = true;
      continue;
    }
    const isMulti = spec.multi?.includes(name);
    if (!isMulti && !spec.strings?.includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = inline ?? args[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (isMulti) ((out[name] ??= []) as string[]).push(value);
    else out[name] = value;
  }
  return out;
}
