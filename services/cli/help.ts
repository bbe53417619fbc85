import { COMMANDS, type CommandHelp } from './commands.js';

/** Readable help text (stdout of `--help`); every command's own output stays JSON. */

const WIDTH = 100;

/** Wraps `text` at WIDTH, every line indented by `indent` spaces. */
function wrap(text: string, indent: number): string {
  const pad = ' '.repeat(indent);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && pad.length + line.length + 1 + word.length > WIDTH) {
      lines.push(pad + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(pad + line);
  return lines.join('\n');
}

/** Label column then text, the text wrapped under itself. */
function table(rows: [string, string][], indent = 2): string {
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  return rows
    .map(([label, text]) => {
      const body = wrap(text, indent + width).trimStart();
      return `${' '.repeat(indent)}${label.padEnd(width)}${body}`;
    })
    .join('\n');
}

export function mainHelp(): string {
  return [
    'meterline — usage metering and billing',
    '',
    'Usage: meterline <command> [options]',
    '',
    'Commands:',
    table(Object.entries(COMMANDS).map(([name, c]) => [name, c.summary])),
    '',
    wrap(
      'Each command prints its result as JSON on stdout, errors and warnings as JSON on stderr, and exits 0 (ok), 1 (failure), 2 (usage) or 78 (configuration). Servers: the local stack (npm start), or DATABASE_URL, NATS_URL and CLICKHOUSE_URL.',
      0,
    ),
    '',
    '"meterline <command> --help" shows a command’s options; docs/cli.md has examples.',
  ].join('\n');
}

export function commandHelp(name: string, help: CommandHelp): string {
  const out = [
    `meterline ${name} — ${help.summary}`,
    '',
    'Usage:',
    ...help.usage.map((u) => wrap(`meterline ${u}`, 2)),
  ];
  if (help.options?.length) out.push('', 'Options:', table(help.options));
  for (const note of help.notes ?? []) out.push('', wrap(note, 0));
  return out.join('\n');
}

/** `meterline --help`, `-h`, `help [command]`, or a command's args containing `--help` / `-h`. */
export function wantsHelp(args: string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}
