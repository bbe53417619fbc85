import { parseArgs } from 'node:util';
import { startS3Sim } from './server.js';

/**
 * `node dist/test/s3-sim/main.js --port N --dir DIR --key ID:SECRET [--host H]`: the S3 simulator as its own process
 * (infra/stack/s3-sim.ts launches it). Objects persist under DIR, so a restart keeps them.
 */
const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    dir: { type: 'string' },
    key: { type: 'string', multiple: true },
  },
});
if (!values.port || !values.dir || !values.key?.length) {
  process.stderr.write('usage: main.js --port N --dir DIR --key ID:SECRET [--host H]\n');
  process.exit(2);
}
const keys = new Map(values.key.map((k) => [k.slice(0, k.indexOf(':')), k.slice(k.indexOf(':') + 1)] as const));
const server = await startS3Sim({ host: values.host, port: Number(values.port), dir: values.dir, keys });
process.stdout.write(`s3 simulator listening on ${JSON.stringify(server.address())}\n`);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
