/** CLI convention: results as JSON on stdout, errors (and warnings) as JSON on stderr, meaningful exit codes. */
export const EXIT = { ok: 0, failure: 1, usage: 2, config: 78 } as const;

export function printResult(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printError(message: string, extra: Record<string, unknown> = {}): void {
  process.stderr.write(JSON.stringify({ error: message, ...extra }) + '\n');
}

/** Something the operator should know although the command succeeded (a withheld scope, a mismatched URL). */
export function printWarning(message: string, extra: Record<string, unknown> = {}): void {
  process.stderr.write(JSON.stringify({ warning: message, ...extra }) + '\n');
}

/** A command line the command cannot run: exit 2 with the command's usage. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export type Flags = Record<string, string | string[] | boolean>;

export interface FlagSpec {
  strings?: string[];
  multi?: string[];
  booleans?: string[];
  /** Flags that must be given (a multi flag at least once); every missing one is named in one error. */
  required?: string[];
}

/** Parses `--name value`, `--name=value`, repeated flags and bare `--flag` booleans. */
export function parseFlags(args: string[], spec: FlagSpec): Flags {
  const out: Flags = {};
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
  const missing = (spec.required ?? []).filter((name) => {
    const v = out[name];
    return v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
  });
  if (missing.length) throw missingFlags(missing);
  return out;
}

/** "--password is required", "--email and --password are required", "--name, --email and --password are required". */
export function missingFlags(names: string[]): UsageError {
  const flags = names.map((n) => `--${n}`);
  const list = flags.length === 1 ? flags[0]! : `${flags.slice(0, -1).join(', ')} and ${flags.at(-1)}`;
  return new UsageError(`${list} ${flags.length === 1 ? 'is' : 'are'} required`, { missing: flags });
}

/** A flag's string value (parseFlags checked the required ones). */
export function stringFlag(flags: Flags, name: string): string | undefined {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
}
