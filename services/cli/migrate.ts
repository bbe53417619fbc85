import { parseConfig } from '../../shared/config.js';
import { migrateAll } from '../migrate.js';
import { stackEnv } from './env.js';
import { EXIT, printResult } from './output.js';

export async function migrateCommand(): Promise<number> {
  const env = await stackEnv({ launch: false });
  const report = await migrateAll(parseConfig(env));
  printResult({ applied: report });
  return EXIT.ok;
}
