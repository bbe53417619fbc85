/**
 * The ceiling of docs/design.md §11: a bare uWebSockets.js server that reads the request body, parses it as JSON
 * and answers 202 with a small JSON document — no auth, no validation, no NATS. What the ingress achieves
 * is reported as a ratio of this, measured in the same run with the same load generator.
 *
 *   node dist/bench/ceiling-server.js <port>     (several processes may share the port: SO_REUSEPORT)
 */
import { App, type HttpResponse } from 'uWebSockets.js';
import { onWholeBody } from './uws-body.js';

const port = Number(process.argv[2] ?? 9300);

function reply(res: HttpResponse, body: Buffer): void {
  let status = '202 Accepted';
  let out: string;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    out = JSON.stringify({
      accepted: Array.isArray(parsed) ? parsed.length : 1,
      received_at: new Date().toISOString(),
    });
  } catch {
    status = '400 Bad Request';
    out = '{"code":"malformed_json"}';
  }
  res.cork(() => {
    res.writeStatus(status);
    res.writeHeader('Content-Type', 'application/json');
    res.end(out);
  });
}

App()
  .any('/*', (res) => onWholeBody(res, (body) => reply(res, body)))
  .listen('127.0.0.1', port, (socket) => {
    if (!socket) {
      process.stderr.write(`ceiling server: cannot listen on ${port}\n`);
      process.exit(1);
    }
    if (process.send) process.send({ type: 'ready', port });
  });
