import { pino, type Logger } from 'pino';

export type { Logger };

/** Card numbers, CVCs, secrets and tokens never reach a log line: pino redacts these paths. */
const REDACT = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  'client_secret',
  '*.client_secret',
  'card.number',
  'card.cvc',
  '*.card.number',
  '*.card.cvc',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  'access_token',
  'refresh_token',
  '*.access_token',
  '*.refresh_token',
];

export function createLogger(opts: { level: string; name: string }): Logger {
  return pino({
    name: opts.name,
    level: opts.level,
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { role: opts.name, pid: process.pid },
  });
}
