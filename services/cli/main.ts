import { COMMANDS } from './commands.js';
import { commandHelp, mainHelp, wantsHelp } from './help.js';
import { EXIT, printError, UsageError } from './output.js';
import { ConfigError } from '../../shared/config.js';
import { userInfo, hostname } from 'node:os';
import { withAuditActor, type AuditActor } from '../../shared/audit/actor.js';

const SUPERVISORS = new Set(['up', 'stack', 'hosts']);

function cliActor(name: string, args: readonly string[]): AuditActor {
  const sub = args[0] && /^[a-z][a-z-]*$/.test(args[0]) ? ` ${args[0]}` : '';
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry for this uid (a container): still audited, as "unknown"
  }
  return { type: 'cli', name: `${user}@${hostname()}`, operation: `meterline ${name}${sub}` };
}

/**
 * `--inventory FILE` and `--host NAME` anywhere on the line: this host of an inventory (docs/hosts.md),
 * the same as METERLINE_INVENTORY and METERLINE_HOST, for every command.
 */
function takeHostFlags(argv: string[]): string[] {
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(inventory|host)(?:=(.*))?$/.exec(argv[i]!);
    if (!m) {
      rest.push(argv[i]!);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${m[1]} needs a value`);
    process.env[m[1] === 'inventory' ? 'METERLINE_INVENTORY' : 'METERLINE_HOST'] = value;
  }
  return rest;
}

async function main(argv: string[]): Promise<number> {
  let rest: string[];
  try {
    rest = takeHostFlags(argv);
  } catch (err) {
    printError((err as Error).message);
    return EXIT.usage;
  }
  const [name, ...args] = rest;
  if (name === undefined) {
    // Nothing asked: what there is to ask (a usage error, so scripts notice).
    process.stderr.write(mainHelp() + '\n');
    return EXIT.usage;
  }
  if (name === '--help' || name === '-h' || (name === 'help' && args.length === 0)) {
    process.stdout.write(mainHelp() + '\n');
    return EXIT.ok;
  }
  const helpFor = name === 'help' ? args[0]! : undefined;
  const asked = helpFor ?? name;
  const command = Object.hasOwn(COMMANDS, asked) ? COMMANDS[asked] : undefined;
  if (!command) {
    printError(`unknown command "${asked}"`, { commands: Object.keys(COMMANDS), help: 'meterline --help' });
    return EXIT.usage;
  }
  if (helpFor || wantsHelp(args)) {
    process.stdout.write(commandHelp(asked, command) + '\n');
    return EXIT.ok;
  }
  try {
    // Every row the command changes is audited as the CLI's (docs/audit.md): the command and subcommand, never
    // its flags (they may hold passwords), and who ran it where. The supervisors aren't: what the processes they
    // run do is those processes' own.
    if (SUPERVISORS.has(name)) return await command.run(args);
    return await withAuditActor(cliActor(name, args), () => command.run(args));
  } catch (err) {
    if (err instanceof UsageError) {
      // The synopsis of the subcommand asked for (accounts create), else every one of the command.
      const sub = command.usage.filter((u) => args[0] && u.startsWith(`${name} ${args[0]} `));
      printError(err.message, {
        ...err.extra,
        usage: (sub.length ? sub : command.usage).map((u) => `meterline ${u}`).join(' | '),
        help: `meterline ${name} --help`,
      });
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      printError('invalid configuration', { problems: err.problems });
      return EXIT.config;
    }
    printError((err as Error).message);
    return EXIT.failure;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
