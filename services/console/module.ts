import { readFile, readdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { RouteModuleFactory } from '../../shared/http/route.js';
import type { HttpReply } from '../../shared/http/context.js';
import { reply } from '../../shared/http/reply.js';
import { NotFoundError, UnavailableError } from '../../shared/errors.js';
import { repoPath } from '../../shared/paths.js';
import { CONSOLE_CLIENT_ID, consoleRedirectUri, registerConsoleClient } from './client.js';

/** Where `npm run build` (vite) writes the console; see services/console/web/vite.config.mjs. */
export const CONSOLE_BUILD_DIR = repoPath('dist/console');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json',
};

/**
 * The page may run only its own bundled script and talk only to this origin (the /v1 API and /oauth/token);
 * blob: URLs carry invoice PDFs to the download link. Chart.js sizes its canvas through CSSOM, which
 * style-src 'self' allows.
 */
const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeAttribute = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * GET /console: the web console (docs/design.md §12), a single-page app built by vite at `npm run build` time,
 * served from memory. It is a public OAuth client of this server, registered here at start; its
 * settings reach the page in a <meta> tag, so the page needs no inline script.
 */
export const consoleModule: RouteModuleFactory = (deps) => {
  const files = new Map<string, Buffer>();
  let index: string | undefined;
  let unavailable: string | undefined;
  return {
    name: 'console',
    area: 'control',
    async start() {
      unavailable = (await registerConsoleClient(deps.pg, deps.config.PUBLIC_BASE_URL)) ?? undefined;
      if (unavailable) deps.log.warn({ reason: unavailable }, 'the console cannot sign in');
      try {
        const html = await readFile(join(CONSOLE_BUILD_DIR, 'index.html'), 'utf8');
        const settings = {
          client_id: CONSOLE_CLIENT_ID,
          redirect_uri: consoleRedirectUri(deps.config.PUBLIC_BASE_URL),
          issuer: deps.config.PUBLIC_BASE_URL,
        };
        index = html.replace(
          'content="__CONSOLE_SETTINGS__"',
          `content="${escapeAttribute(JSON.stringify(settings))}"`,
        );
        for (const name of await readdir(join(CONSOLE_BUILD_DIR, 'assets')))
          files.set(name, await readFile(join(CONSOLE_BUILD_DIR, 'assets', name)));
      } catch (err) {
        unavailable ??= `the console is not built (${(err as Error).message}): run npm run build`;
        deps.log.warn({ reason: unavailable }, 'console not served');
      }
    },
    register(server) {
      server.route({
        method: 'GET',
        path: '/console',
        auth: 'public',
        handler: (): HttpReply => {
          if (unavailable || index === undefined)
            throw new UnavailableError(`The console is unavailable: ${unavailable}.`);
          return reply.file(index, 'text/html; charset=utf-8', {
            'Cache-Control': 'no-store',
            'Content-Security-Policy': CONSOLE_CSP,
            'X-Frame-Options': 'DENY',
            'Referrer-Policy': 'no-referrer',
            'X-Content-Type-Options': 'nosniff',
          });
        },
        doc: {
          summary: 'The web console (single-page app; signs in through /oauth/authorize)',
          tags: ['console'],
          responses: { '200': { description: 'HTML page', contentType: 'text/html' } },
        },
      });
      // `/console/` (a typed or bookmarked trailing slash) is the console too: one canonical URL, query kept (the
      // OAuth answer comes back to /console?code=…).
      server.route({
        method: 'GET',
        path: '/console/',
        auth: 'public',
        handler: (ctx): HttpReply => ({
          status: 308,
          headers: { Location: ctx.rawQuery ? `/console?${ctx.rawQuery}` : '/console', 'Cache-Control': 'no-store' },
        }),
        doc: {
          summary: 'Redirects to /console (permanent, the query string kept)',
          tags: ['console'],
          responses: { '308': { description: 'Location: /console' } },
        },
      });
      server.route({
        method: 'GET',
        path: '/console/assets/:file',
        auth: 'public',
        handler: (ctx): HttpReply => {
          const name = ctx.params.file!;
          const body = files.get(name);
          if (!body) throw new NotFoundError(`No console asset ${name}.`);
          // File names carry a content hash: cache them for good.
          return reply.file(body, CONTENT_TYPES[extname(name)] ?? 'application/octet-stream', {
            'Cache-Control': 'public, max-age=31536000, immutable',
            'X-Content-Type-Options': 'nosniff',
          });
        },
        doc: { summary: "The console's scripts and styles (content-hashed file names)", tags: ['console'] },
      });
    },
  };
};
