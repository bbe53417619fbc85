import { COMMANDS } from './commands.js';
import { EXIT, printError, UsageError } from './output.js';
import { ConfigError } from '../../shared/config.js';

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
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    printError(name ? `unknown command "${name}"` : 'missing command', {
      usage: Object.values(COMMANDS).map((c) => `meterline ${c.usage}`),
    });
    return EXIT.usage;
  }
  try {
    return await command.run(args);
  } catch (err) {
    if (err instanceof UsageError) {
      printError(err.message, { usage: `meterline ${command.usage}` });
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
