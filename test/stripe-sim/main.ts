import { parseArgs } from 'node:util';
import { startStripeSim } from './server.js';

/**
 * `node dist/test/stripe-sim/main.js --port N [--host H] [--state FILE] [--webhook-url U --webhook-secret S]`:
 * the Stripe simulator as its own process (infra/stack/stripe-sim.ts launches it).
 */
const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    state: { type: 'string' },
    'webhook-url': { type: 'string' },
    'webhook-secret': { type: 'string' },
  },
});
if (!values.port) {
  process.stderr.write(
    'usage: main.js --port N [--host H] [--state FILE] [--webhook-url URL --webhook-secret whsec_…]\n',
  );
  process.exit(2);
}
const webhook =
  values['webhook-url'] && values['webhook-secret']
    ? { url: values['webhook-url'], secret: values['webhook-secret'] }
    : null;
const server = await startStripeSim({
  host: values.host,
  port: Number(values.port),
  stateFile: values.state ?? null,
  webhook,
});
process.stdout.write(`stripe simulator listening on ${JSON.stringify(server.address())}\n`);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
