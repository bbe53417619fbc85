import { COMMANDS } from './commands.js';
import { commandHelp, mainHelp, wantsHelp } from './help.js';
import { EXIT, printError, UsageError } from './output.js';
import { ConfigError } from '../../shared/config.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
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
    return await command.run(args);
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
