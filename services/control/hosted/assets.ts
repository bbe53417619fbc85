import type { RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { HOSTED_CSS, PAY_SCRIPT } from './pay-script.js';

/** GET /hosted/assets/pay.js and /hosted/assets/hosted.css: the hosted pages' script and style ('self' in their CSP). */
export function hostedAssetRoutes(): RouteDef[] {
  const asset = (path: string, body: string, type: string): RouteDef => ({
    method: 'GET',
    path,
    auth: 'public',
    handler: () =>
      reply.file(body, type, { 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' }),
    doc: {
      summary: `The hosted pages' ${path.endsWith('.js') ? 'script' : 'stylesheet'}`,
      tags: ['hosted pages'],
      responses: { '200': { description: 'the file', schema: { type: 'string' }, contentType: type } },
    },
  });
  return [
    asset('/hosted/assets/pay.js', PAY_SCRIPT, 'text/javascript; charset=utf-8'),
    asset('/hosted/assets/hosted.css', HOSTED_CSS, 'text/css; charset=utf-8'),
  ];
}
