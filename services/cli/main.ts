import { COMMANDS } from './commands.js';
import { EXIT, printError, UsageError } from './output.js';
import { ConfigError } from '../../shared/config.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
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
